package partition

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The model: the ring's versions are one register. A write moves it from
// v-1 to the version v it was acknowledged with (one write, one version);
// a write whose outcome is unknown moves it on by one wherever it is
// linearized, and Porcupine may also put it after everything, as if it
// never happened. A read answers the version the register holds. Reads
// marked Ringd-Stale are not in the history: they promise nothing.

// linInput is an operation's input.
type linInput struct {
	Write    bool
	Instance int
	Key      string // writes
	Path     string // reads
}

// linOutput is an operation's output.
type linOutput struct {
	Version int64
	Unknown bool // a write that never got an answer
}

// VersionModel is the register of versions, for Porcupine.
var VersionModel = porcupine.Model{
	Init: func() interface{} { return int64(1) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		v := state.(int64)
		in, out := input.(linInput), output.(linOutput)
		switch {
		case in.Write && out.Unknown:
			return true, v + 1
		case in.Write:
			return out.Version == v+1, out.Version
		default:
			return out.Version == v, v
		}
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(linInput), output.(linOutput)
		name := Instances[in.Instance].Name
		if in.Write {
			if out.Unknown {
				return fmt.Sprintf("%s write %s → ?", name, in.Key)
			}
			return fmt.Sprintf("%s write %s → v%d", name, in.Key, out.Version)
		}
		return fmt.Sprintf("%s %s → v%d", name, in.Path, out.Version)
	},
	DescribeState: func(state interface{}) string { return fmt.Sprintf("v%d", state.(int64)) },
}

// Operations is the history Porcupine checks: every write (from its first
// try to its acknowledgement; unknown ones return at infinity) and every
// unmarked read that answered a version.
func Operations(h History) []porcupine.Operation {
	var ops []porcupine.Operation
	for _, w := range h.Writes {
		op := porcupine.Operation{
			ClientId: w.Client,
			Input:    linInput{Write: true, Instance: w.Instance, Key: w.Key},
			Call:     int64(w.Invoke),
			Output:   linOutput{Version: w.Version},
			Return:   int64(w.Complete),
		}
		if !w.Acked {
			op.Output = linOutput{Unknown: true}
			op.Return = math.MaxInt64
		}
		ops = append(ops, op)
	}
	for _, r := range h.Reads {
		if !r.OK() || r.Stale {
			continue
		}
		ops = append(ops, porcupine.Operation{
			ClientId: r.Client,
			Input:    linInput{Instance: r.Instance, Path: r.Path},
			Call:     int64(r.Invoke),
			Output:   linOutput{Version: r.Version},
			Return:   int64(r.Complete),
		})
	}
	return ops
}

// Linearizability is the outcome of the check.
type Linearizability struct {
	Result porcupine.CheckResult
	Ops    int
	Took   time.Duration
	// Visualization is the HTML file written when the history is not
	// linearizable (or could not be decided).
	Visualization string
	// Offending describes the operations that could not be linearized.
	Offending []string
}

// CheckLinearizable checks the history with Porcupine; when it is not
// linearizable (or undecided within CheckLimit) it writes Porcupine's
// visualization, with the faults marked, into outDir.
func CheckLinearizable(h History, eps []Episode, outDir string) Linearizability {
	ops := Operations(h)
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(VersionModel, ops, CheckLimit)
	l := Linearizability{Result: res, Ops: len(ops), Took: time.Since(start)}
	if res == porcupine.Ok {
		return l
	}
	l.Offending = offending(info, ops)
	var notes []porcupine.Annotation
	for _, ep := range eps {
		notes = append(notes, porcupine.Annotation{
			Tag:             "faults",
			Start:           int64(ep.Start),
			End:             int64(ep.Heal),
			Description:     ep.Fault.Name(),
			Details:         ep.Detail,
			BackgroundColor: "#f6c8c8",
		})
		for _, inst := range Instances {
			if c := ep.Converged[inst.Index]; c != Never {
				notes = append(notes, porcupine.Annotation{
					Tag:         "faults",
					Start:       int64(c),
					Description: inst.Name + " converged",
				})
			}
		}
	}
	info.AddAnnotations(notes)
	path := filepath.Join(outDir, "linearizability.html")
	if err := os.MkdirAll(outDir, 0o755); err == nil {
		if err := porcupine.VisualizePath(VersionModel, info, path); err == nil {
			l.Visualization, _ = filepath.Abs(path)
		} else {
			l.Offending = append(l.Offending, "visualization failed: "+err.Error())
		}
	}
	return l
}

// offending explains a failed check from the longest partial
// linearization: the state it reached, its last operations, and the
// operations that had to come next (returned earliest) and could not.
func offending(info porcupine.LinearizationInfo, ops []porcupine.Operation) []string {
	partitions := info.PartialLinearizationsOperations()
	if len(partitions) == 0 || len(partitions[0]) == 0 {
		return []string{"Porcupine found no partial linearization"}
	}
	var longest []porcupine.Operation
	for _, p := range partitions[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	describe := func(op porcupine.Operation) string {
		ret := "∞"
		if op.Return != math.MaxInt64 {
			ret = fmt.Sprintf("%.3f s", time.Duration(op.Return).Seconds())
		}
		return fmt.Sprintf("%s [%.3f s – %s]", VersionModel.DescribeOperation(op.Input, op.Output),
			time.Duration(op.Call).Seconds(), ret)
	}
	state := VersionModel.Init()
	done := map[string]bool{}
	for _, op := range longest {
		_, state = VersionModel.Step(state, op.Input, op.Output)
		done[opKey(op)] = true
	}
	lines := []string{fmt.Sprintf("the longest linearization found covers %d operations and ends at %s; its last ones:",
		len(longest), VersionModel.DescribeState(state))}
	from := len(longest) - 5
	if from < 0 {
		from = 0
	}
	for _, op := range longest[from:] {
		lines = append(lines, "  "+describe(op))
	}
	var rest []porcupine.Operation
	for _, op := range ops {
		if !done[opKey(op)] {
			rest = append(rest, op)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Return < rest[j].Return })
	if len(rest) > 10 {
		rest = rest[:10]
	}
	lines = append(lines, "operations that could not follow it (earliest to return first):")
	for _, op := range rest {
		lines = append(lines, "  "+describe(op))
	}
	return lines
}

func opKey(op porcupine.Operation) string {
	return strings.Join([]string{fmt.Sprint(op.ClientId), fmt.Sprint(op.Call)}, "/")
}
