//! Every supported `#[pi_tool]` form compiles (and runs), every misuse fails with the
//! snapshot error in `ui/fail/*.stderr`. Regenerate snapshots with `TRYBUILD=overwrite`
//! and read each one: the error must point at the user's tokens and say how to fix it.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
