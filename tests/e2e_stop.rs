//! A stopped carve stops its test runs. Test runs are spawned as leaders of their own process
//! groups (a timeout kills all they started), so a signal meant for carve — SIGTERM from
//! `kill` or Slurm's `scancel`, SIGINT from Ctrl-C — did not reach them: carve stopped and
//! its pytest runs went on (a restarted dataset run then failed to clear their trees,
//! "Directory not empty"). carve now stops every group it started before it ends.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

use carve_testutil::needs;

/// Pids of the processes that wrote a line to `file`.
fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Whether `pid` is still running (a zombie, dead but not reaped, is not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

fn stopped_carve_leaves_no_test_running(sig: i32) {
    let (_keep, repo) = carve_testutil::fixture_copy("python/tally");
    let started = tempfile::tempdir().unwrap();
    let pidfile = started.path().join("pids");
    std::fs::write(
        repo.join("tests/test_zz_slow.py"),
        format!(
            "import os, time\n\n\ndef test_slow():\n    with open({:?}, 'a') as f:\n        f.write(f'{{os.getpid()}}\\n')\n    time.sleep(600)\n",
            pidfile.display().to_string()
        ),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut carve = common::carve()
        .args(["baseline", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--test-timeout", "900"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    while pids(&pidfile).is_empty() {
        assert!(Instant::now() < deadline, "the slow test never started");
        assert!(carve.try_wait().unwrap().is_none(), "carve ended before the slow test started");
        std::thread::sleep(Duration::from_millis(100));
    }
    let running_tests = pids(&pidfile);
    assert!(running_tests.iter().all(|&p| running(p)), "{running_tests:?}");
    // kill(1) rather than libc's kill: the workspace forbids unsafe code outside `core`.
    let kill = std::process::Command::new("kill").arg(format!("-{sig}")).arg(carve.id().to_string()).status().unwrap();
    assert!(kill.success());
    let status = wait_timeout::ChildExt::wait_timeout(&mut carve, Duration::from_secs(30)).unwrap();
    let Some(status) = status else {
        carve.kill().unwrap();
        panic!("carve did not stop within 30 s of signal {sig}");
    };
    assert_eq!(status.signal(), Some(sig), "carve ends as the signal would have ended it: {status:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while running_tests.iter().any(|&p| running(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<i32> = running_tests.iter().copied().filter(|&p| running(p)).collect();
    for p in &left {
        let _ = std::process::Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    assert!(left.is_empty(), "test processes {left:?} outlived carve");
}

#[needs("python3")]
fn sigterm_stops_the_test_runs_carve_started() {
    stopped_carve_leaves_no_test_running(15);
}

#[needs("python3")]
fn sigint_stops_the_test_runs_carve_started() {
    stopped_carve_leaves_no_test_running(2);
}
