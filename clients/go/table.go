package ringd

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringd/ringd/clients/go/placement"
)

// built says how a placement was built.
type built int

const (
	builtSnapshot built = iota // from the snapshot alone
	builtMoves                 // a table: the previous version and the moves
	builtDownload              // a table: downloaded
)

// verified builds and verifies s's placement. A table snapshot carries
// no table: it is completed from the version held and this version's
// moves when the client holds version − 1, otherwise (or when the moves
// do not verify) by downloading …/snapshots/{v}/table. Either way the
// result must hash to the snapshot's fingerprint.
func (w *watcher) verified(ctx context.Context, held *View, s *placement.Snapshot) (*placement.Placement, built, error) {
	if s.Config.Algorithm != placement.Table {
		p, err := s.Placement(placement.TableSource{})
		return p, builtSnapshot, err
	}
	if held != nil && s.TableMoves != nil && held.Version()+1 == s.Version && held.Placement.Algorithm() == placement.Table {
		p, err := s.Placement(placement.TableSource{Previous: held.Placement})
		if err == nil {
			return p, builtMoves, nil
		}
		// Moves that do not verify are no reason to refuse the version:
		// the table itself may still be good.
	}
	p, err := s.Placement(placement.TableSource{})
	if !errors.Is(err, placement.ErrTableRequired) {
		return p, builtSnapshot, err // no active node: nothing to download
	}
	path := fmt.Sprintf("/v1/rings/%s/snapshots/%d/table", w.c.ring, s.Version)
	a, err := w.c.eps.call(ctx, "GET", path, nil, nil, 0)
	if err != nil {
		return nil, builtDownload, err
	}
	p, err = s.Placement(placement.TableSource{Encoding: a.body})
	return p, builtDownload, err
}
