//! The stdio transport of the handshake: the server a child process in a process group of
//! its own, started from an empty temporary directory, newline-delimited JSON-RPC on its stdin
//! and stdout, its stderr's tail kept for the evidence of a failure.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{shorten, tail, HandshakeError, Rpc, GRACE, MAX_LINE, STDERR_KEEP};

/// What the stdout reader hands over.
enum Line {
    Text(String),
    TooLong,
    Eof,
}

pub(super) struct Server {
    child: Child,
    pgid: rustix::process::Pid,
    /// Messages to write; the writer thread owns stdin so that a server that stops reading
    /// can never block us. Dropping the sender closes stdin.
    to_server: Option<Sender<String>>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Receiver<()>,
    status: Option<ExitStatus>,
    _cwd: tempfile::TempDir,
}

impl Rpc for Server {
    fn send(&mut self, msg: &Value, _step: &'static str) -> Result<(), HandshakeError> {
        if let Some(tx) = &self.to_server {
            // A server that has gone is found out by the reader; nothing to do here.
            let _ = tx.send(msg.to_string());
        }
        Ok(())
    }

    fn next(
        &mut self,
        step: &'static str,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Option<Value>, HandshakeError> {
        let now = Instant::now();
        let line = if now >= deadline {
            Err(RecvTimeoutError::Timeout)
        } else {
            self.lines.recv_timeout(deadline - now)
        };
        let text = match line {
            Ok(Line::Text(t)) => t,
            Ok(Line::TooLong) => return Err(HandshakeError::LineTooLong { step }),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                return Err(HandshakeError::Exited {
                    step,
                    status: self.exit_status(),
                })
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(HandshakeError::TimedOut { step, timeout })
            }
        };
        if text.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|_| HandshakeError::NotJsonRpc {
                step,
                line: shorten(&text, 200),
            })
    }
}

impl Server {
    pub(super) fn start(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> Result<Server, HandshakeError> {
        let spawn_err = |source| HandshakeError::Spawn {
            command: command.to_string(),
            source,
        };
        // An empty directory, as for client calls: the server's idea of "here" is no project.
        let cwd = tempfile::tempdir().map_err(spawn_err)?;
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let (mut child, pgid) =
            crate::process::spawn_group(Path::new(command), &args, false, |cmd| {
                cmd.envs(env)
                    .current_dir(cwd.path())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
            })
            .map_err(spawn_err)?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr_pipe = child.stderr.take().expect("stderr is piped");
        let (to_server, outgoing) = mpsc::channel();
        std::thread::spawn(move || write_messages(stdin, outgoing));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, tx));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (done_tx, stderr_done) = mpsc::channel();
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || {
            keep_tail(stderr_pipe, &keep);
            let _ = done_tx.send(());
        });
        Ok(Server {
            child,
            pgid,
            to_server: Some(to_server),
            lines,
            stderr,
            stderr_done,
            status: None,
            _cwd: cwd,
        })
    }

    /// How the server ended, waiting a moment: its stdout closes just before it exits.
    fn exit_status(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(500);
        while self.status.is_none() && Instant::now() < until {
            match self.child.try_wait() {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        match self.status {
            Some(s) => describe_status(s),
            None => "still running".into(),
        }
    }

    /// Step 5: close stdin, SIGTERM the group, SIGKILL it after the grace, reap the child.
    pub(super) fn end(&mut self) {
        self.to_server = None;
        crate::process::signal_group(self.pgid, rustix::process::Signal::TERM);
        let until = Instant::now() + GRACE;
        while self.status.is_none() && Instant::now() < until {
            match self.child.try_wait() {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        // Always: a grandchild that ignored SIGTERM goes too.
        crate::process::signal_group(self.pgid, rustix::process::Signal::KILL);
        if self.status.is_none() {
            self.status = self.child.wait().ok();
        }
    }

    /// The last lines of stderr, on one line. Waits briefly for the pipe to close so that a
    /// crashing server's last words are in it.
    pub(super) fn stderr_tail(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        let bytes = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        tail(&String::from_utf8_lossy(&bytes), 5, 400)
    }
}

fn write_messages(mut stdin: ChildStdin, outgoing: Receiver<String>) {
    for msg in outgoing {
        if stdin
            .write_all(msg.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_lines(stdout: impl Read, tx: Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        // A read error ends the stream like EOF does: either way no more messages come.
        let n: usize = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .unwrap_or_default();
        let msg = if n == 0 {
            Line::Eof
        } else if buf.len() > MAX_LINE {
            Line::TooLong
        } else {
            Line::Text(String::from_utf8_lossy(&buf).into_owned())
        };
        let last = !matches!(msg, Line::Text(_));
        if tx.send(msg).is_err() || last {
            return;
        }
    }
}

/// Keep the last [`STDERR_KEEP`] bytes of `pipe` in `keep`.
fn keep_tail(mut pipe: impl Read, keep: &Mutex<Vec<u8>>) {
    let mut chunk = [0u8; 4096];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let Ok(mut buf) = keep.lock() else { return };
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > STDERR_KEEP {
                    let cut = buf.len() - STDERR_KEEP;
                    buf.drain(..cut);
                }
            }
        }
    }
}

fn describe_status(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => s.to_string(),
    }
}
