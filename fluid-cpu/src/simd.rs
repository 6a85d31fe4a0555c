//! Which instruction set the kernels run with.
//!
//! The release build targets baseline x86-64 (SSE2), so that the binary runs on any x86-64
//! machine. Where the CPU has more (AVX2 and FMA, "x86-64-v3"), the kernels' row loops run
//! through [`pulp`]'s runtime dispatch, which compiles them a second time with those features
//! enabled and picks that copy when the CPU has them. (pulp's AVX-512 copy, its `x86-v4`
//! feature, was measured and left off: no faster here, slower at 1024², doc/PERFORMANCE.md.)
//! Rust never fuses a multiply and an add on its own, and every operation the kernels use is
//! exactly rounded IEEE arithmetic in both copies, so the results are the same bits either way
//! (tested: swirly-conformance's `the_vector_copies_of_the_kernels_compute_the_baseline_bits`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static BASELINE_ONLY: AtomicBool = AtomicBool::new(false);
static DETECTED: OnceLock<pulp::Arch> = OnceLock::new();

/// Run the kernels with the baseline instruction set only (`true`), or with the best one the
/// CPU has (`false`, the default). A process-wide switch for comparisons and tests: it changes
/// speed, never results.
pub fn set_baseline_only(baseline: bool) {
    BASELINE_ONLY.store(baseline, Ordering::Relaxed);
}

/// The instruction set the kernels run with now: `"baseline"`, or on x86-64
/// `"x86-64-v3 (AVX2, FMA)"` (`"x86-64-v4 (AVX-512)"` if pulp's `x86-v4` feature is turned
/// on; elsewhere `"extended"`, the best set pulp found).
pub fn instruction_set() -> &'static str {
    names().0
}

/// [`instruction_set`] in a word, for device names: `SSE2`, `AVX2` or `AVX-512` on x86-64.
pub fn short_name() -> &'static str {
    names().1
}

/// The long and the short name of the instruction set in use.
fn names() -> (&'static str, &'static str) {
    #[cfg(target_arch = "x86_64")]
    match arch() {
        pulp::Arch::Scalar => ("baseline", "SSE2"),
        pulp::Arch::V3(_) => ("x86-64-v3 (AVX2, FMA)", "AVX2"),
        _ => ("x86-64-v4 (AVX-512)", "AVX-512"),
    }
    #[cfg(not(target_arch = "x86_64"))]
    match arch() {
        pulp::Arch::Scalar => ("baseline", "baseline"),
        _ => ("extended", "extended"),
    }
}

/// The dispatcher the row loops go through.
#[inline]
pub(crate) fn arch() -> pulp::Arch {
    if BASELINE_ONLY.load(Ordering::Relaxed) {
        return pulp::Arch::Scalar;
    }
    *DETECTED.get_or_init(pulp::Arch::new)
}

/// `f()` compiled for the instruction set of `arch`. `f` must be `#[inline(always)]` (so must
/// everything it calls that should run with those features): it is inlined into `pulp`'s
/// function with the target features, and what is not inlined runs as baseline code. Taking
/// `f` as `FnMut` (not `FnOnce`) calls its body directly instead of through a `call_once`
/// shim, which is not inlined.
#[inline(always)]
pub(crate) fn vectorized<R>(arch: pulp::Arch, f: impl FnMut() -> R) -> R {
    arch.dispatch(Call(f))
}

struct Call<F>(F);

impl<R, F: FnMut() -> R> pulp::WithSimd for Call<F> {
    type Output = R;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> R {
        let mut f = self.0;
        f()
    }
}
