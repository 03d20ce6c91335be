//! `host_port_probe IFACE`: opens a [`HostPort`] on IFACE (in the current network namespace),
//! prints `ready` on stdout, then receives and discards frames until it is killed. The
//! host_port integration test kills it with SIGKILL to check that a new endpoint starts
//! cleanly after an old one died without cleaning up.

use pfcswitchd::host_port::HostPort;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(iface) = std::env::args().nth(1) else {
        eprintln!("usage: host_port_probe IFACE");
        return ExitCode::FAILURE;
    };
    let mut port = match HostPort::open(&iface) {
        Ok(port) => port,
        Err(error) => {
            eprintln!("host_port_probe: {error}");
            return ExitCode::FAILURE;
        }
    };
    // Like a scenario runner with its iperf3: a child that outlives a SIGKILLed parent.
    let child = std::process::Command::new("sleep")
        .arg("30")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(error) => {
            eprintln!("host_port_probe: cannot start its child: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "ready {}", child.id()).and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    loop {
        let mut poll = libc::pollfd { fd: port.fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut poll, 1, 1000) };
        port.recv(|_, _| {});
    }
}
