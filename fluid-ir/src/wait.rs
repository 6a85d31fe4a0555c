//! How the GPU backends wait for the device: poll for a short while, then block.
//!
//! A blocking wait (`vkWaitForFences`, wgpu's `poll(Wait)`) puts the calling thread to sleep
//! until the driver wakes it. On the H100 machine that wake-up added about 40 µs to a step
//! waited for, a sixth of a 256² smoke step (doc/PERFORMANCE.md, "Waiting for the GPU by
//! polling"). Both GPU backends therefore first poll the fence (or wgpu's queue) for up to a
//! *spin budget*, yielding the core to other threads between checks, and only then block. A
//! wait that ends within the budget returns microseconds after the device finishes; a longer
//! one costs at most the budget in CPU time and then sleeps as before.
//!
//! The budget is [`DEFAULT_SPIN`] on a hardware GPU and zero on a CPU device (Mesa's lavapipe),
//! whose work runs on the very cores a poll would take. `FLUID_GPU_SPIN_US` ([`SPIN_ENV`])
//! sets it for every GPU backend a process opens (`0`: always block), and
//! [`Backend::set_wait_spin`](crate::backend::Backend::set_wait_spin) for one backend.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The environment variable that sets the spin budget, in whole microseconds.
pub const SPIN_ENV: &str = "FLUID_GPU_SPIN_US";

/// The spin budget on a hardware GPU: it covers a whole smoke step up to about 1024² on an
/// H100 (0.57 ms), so a step waited for returns without sleeping.
pub const DEFAULT_SPIN: Duration = Duration::from_millis(2);

/// The largest budget accepted: a wait longer than this should sleep.
pub const MAX_SPIN: Duration = Duration::from_secs(1);

/// The default budget for a device: zero where the device is the CPU itself.
pub fn default_spin(cpu_device: bool) -> Duration {
    if cpu_device { Duration::ZERO } else { DEFAULT_SPIN }
}

/// A budget as `FLUID_GPU_SPIN_US` writes it: whole microseconds from 0 to 1,000,000.
pub fn parse_spin(text: &str) -> Result<Duration> {
    let refuse = |why: &str| Error::invalid(SPIN_ENV, text, why);
    let us: u64 =
        text.trim().parse().map_err(|_| refuse("expected whole microseconds, e.g. 2000 (0: always block)"))?;
    let spin = Duration::from_micros(us);
    if spin > MAX_SPIN {
        return Err(refuse("at most 1000000 (one second)"));
    }
    Ok(spin)
}

/// `spin` if it is a budget a backend takes (at most [`MAX_SPIN`]), else an error naming it.
pub fn checked(spin: Duration) -> Result<Duration> {
    if spin > MAX_SPIN {
        return Err(Error::invalid("wait spin", format!("{spin:?}"), "at most one second"));
    }
    Ok(spin)
}

/// `FLUID_GPU_SPIN_US`: `None` when unset (the backend's default), else the budget; a value
/// that is not one is an error naming it.
pub fn spin_from_env() -> Result<Option<Duration>> {
    match std::env::var(SPIN_ENV) {
        Ok(text) => parse_spin(&text).map(Some),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => {
            Err(Error::invalid(SPIN_ENV, raw.to_string_lossy(), "expected whole microseconds, e.g. 2000"))
        }
    }
}

/// Call `done` until it returns `true` or `budget` has passed, yielding the core between calls;
/// whether it returned `true`. A zero budget calls it never. Its errors end the poll.
pub fn poll_for(budget: Duration, mut done: impl FnMut() -> Result<bool>) -> Result<bool> {
    if budget.is_zero() {
        return Ok(false);
    }
    let start = Instant::now();
    loop {
        if done()? {
            return Ok(true);
        }
        if start.elapsed() >= budget {
            return Ok(false);
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_and_bad_ones_name_the_value() {
        assert_eq!(parse_spin("0").expect("0"), Duration::ZERO);
        assert_eq!(parse_spin(" 2000 ").expect("2000"), Duration::from_micros(2000));
        assert_eq!(parse_spin("1000000").expect("the largest"), MAX_SPIN);
        for bad in ["", "-1", "2ms", "1.5", "1000001", "99999999999999999999"] {
            let e = parse_spin(bad).expect_err(bad).to_string();
            assert!(e.contains(SPIN_ENV) && e.contains(bad.trim()), "{bad}: {e}");
        }
    }

    #[test]
    fn budgets_past_a_second_are_refused() {
        assert_eq!(checked(MAX_SPIN).expect("one second"), MAX_SPIN);
        let e = checked(Duration::from_millis(1001)).expect_err("past a second").to_string();
        assert!(e.contains("wait spin") && e.contains("1.001s"), "{e}");
    }

    #[test]
    fn no_spin_on_a_cpu_device() {
        assert_eq!(default_spin(true), Duration::ZERO);
        assert_eq!(default_spin(false), DEFAULT_SPIN);
    }

    #[test]
    fn the_poll_stops_when_done_or_when_the_budget_is_spent() {
        // Done on the fifth call: five calls, `true`.
        let mut calls = 0;
        let done = poll_for(Duration::from_secs(60), || {
            calls += 1;
            Ok(calls == 5)
        });
        assert!(done.expect("no error"));
        assert_eq!(calls, 5);
        // Never done: `false` once the budget has passed, after at least one call.
        let mut calls = 0;
        let start = Instant::now();
        let done = poll_for(Duration::from_millis(5), || {
            calls += 1;
            Ok(false)
        });
        assert!(!done.expect("no error"));
        assert!(calls >= 1 && start.elapsed() >= Duration::from_millis(5));
        // A zero budget never polls.
        let mut calls = 0;
        assert!(
            !poll_for(Duration::ZERO, || {
                calls += 1;
                Ok(true)
            })
            .expect("no error")
        );
        assert_eq!(calls, 0);
        // An error ends it.
        let e = poll_for(Duration::from_secs(60), || Err(Error::invalid("fence", "lost", "device lost")));
        assert!(e.is_err());
    }
}
