// Shared by the Poisson filter passes: the index folding of swirly_core::poisson_filter::fold
// (mirror about the walls, wrap on periodic axes) and the bank stride.

const MAX_TAPS: u32 = 65u;

fn fold(i: i32, n: i32, periodic: bool) -> u32 {
    if (periodic) {
        return u32(((i % n) + n) % n);
    }
    let p = 2 * n;
    let m = ((i % p) + p) % p;
    return u32(select(m, p - 1 - m, m >= n));
}
