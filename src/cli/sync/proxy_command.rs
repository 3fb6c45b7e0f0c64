//! The operator's check and reload commands (`nginx -t`, `nginx -s
//! reload`, `systemctl reload haproxy` …), run through `sh -c` so they
//! read as they would in a unit file. Nothing from the ring reaches the
//! command line: the version and the file's path go in environment
//! variables.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// The longest part of a command's output kept in a failure: the end,
/// where proxies put the verdict.
const OUTPUT_KEPT: usize = 1500;

/// One of the operator's commands.
#[derive(Debug, Clone)]
pub(super) struct ProxyCommand {
    /// `check` or `reload`, for messages.
    pub(super) role: &'static str,
    /// The shell text.
    pub(super) text: String,
}

impl ProxyCommand {
    /// Runs the command with `env`, killing it after `timeout`. A failure
    /// says how it ended and what it printed (stderr, then stdout).
    pub(super) async fn run(
        &self,
        env: &[(&str, String)],
        timeout: Duration,
    ) -> Result<(), String> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.text)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = command
            .spawn()
            .map_err(|e| format!("{} command could not start: {e}", self.role))?;
        let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(format!("{} command failed to run: {e}", self.role)),
            Err(_) => {
                return Err(format!(
                    "{} command did not finish within {}s and was killed",
                    self.role,
                    timeout.as_secs_f64()
                ))
            }
        };
        if output.status.success() {
            return Ok(());
        }
        let how = match output.status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_owned(),
        };
        let mut said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        let out = String::from_utf8_lossy(&output.stdout);
        if !out.trim().is_empty() {
            if !said.is_empty() {
                said.push('\n');
            }
            said.push_str(out.trim());
        }
        Err(if said.is_empty() {
            format!("{} command {how}", self.role)
        } else {
            format!("{} command {how}: {}", self.role, tail(&said, OUTPUT_KEPT))
        })
    }
}

/// The last `max` bytes of `text` (at a character boundary), marked as cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(text: &str) -> ProxyCommand {
        ProxyCommand {
            role: "check",
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn success_failure_and_output() {
        let env = [("RINGD_VERSION", "7".to_owned())];
        let t = Duration::from_secs(10);
        assert_eq!(
            command("test \"$RINGD_VERSION\" = 7").run(&env, t).await,
            Ok(())
        );
        assert_eq!(
            command("echo 'bad line 3' >&2; echo more; exit 4")
                .run(&env, t)
                .await,
            Err("check command exited with status 4: bad line 3\nmore".into())
        );
        assert_eq!(
            command("exit 1").run(&env, t).await,
            Err("check command exited with status 1".into())
        );
        assert_eq!(
            command("sleep 5")
                .run(&env, Duration::from_millis(100))
                .await,
            Err("check command did not finish within 0.1s and was killed".into())
        );
    }

    #[test]
    fn long_output_keeps_its_end() {
        let text = format!("{}é-end", "x".repeat(2000));
        let kept = tail(&text, 10);
        assert_eq!(kept, "…xxxxé-end");
    }
}
