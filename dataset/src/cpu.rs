//! Wall and CPU time of a stage: CPU is this process's (every thread) plus its children's that
//! it waited for (the test runs), read from `/proc/self/stat` (Linux; 0 elsewhere).

use std::time::Instant;

/// `/proc/[pid]/stat` counts in clock ticks of `USER_HZ`, 100 on Linux.
const USER_HZ: f64 = 100.0;

/// CPU seconds so far: user and system of this process and of its waited-for children.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    parse_stat(&stat).unwrap_or(0.0)
}

/// Fields 14–17 (`utime stime cutime cstime`), counted after the `)` that ends the command
/// name (which may hold spaces).
fn parse_stat(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state is field 3, so utime (14) is index 11.
    let ticks: f64 = fields.get(11..15)?.iter().map(|f| f.parse::<f64>().unwrap_or(0.0)).sum();
    Some(ticks / USER_HZ)
}

/// A stage being timed.
pub struct Timer {
    start: Instant,
    cpu: f64,
}

impl Timer {
    pub fn start() -> Timer {
        Timer { start: Instant::now(), cpu: cpu_seconds() }
    }

    /// (wall seconds, CPU seconds) since the start, rounded to milliseconds.
    pub fn stop(&self) -> (f64, f64) {
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        (round(self.start.elapsed().as_secs_f64()), round((cpu_seconds() - self.cpu).max(0.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_command_name_with_spaces() {
        let stat = "123 (a b) S 1 2 3 4 5 6 7 8 9 10 150 50 200 100 20 0 1 0";
        assert_eq!(parse_stat(stat), Some(5.0));
    }

    #[test]
    fn a_child_that_burns_cpu_counts_once_waited_for() {
        let before = cpu_seconds();
        let st =
            std::process::Command::new("sh").args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"]).status();
        assert!(st.unwrap().success());
        assert!(cpu_seconds() > before, "the child's CPU time is counted");
    }
}
