//! A bounded run of the program generator (issue #12): every program checks,
//! its first- and second-order gradients match finite differences, the
//! printed gradient programs check and run to the same numbers, and the
//! clean-up passes change no value. The long hunt is
//! `cargo run --release -p gradgen -- --minutes N`.

#[test]
fn generated_programs() {
    let cands = gradgen::candidates();
    assert!(
        cands.len() > 150,
        "only {} primitives to draw from",
        cands.len()
    );
    let mut counts = gradgen::Counts::default();
    let mut failures = Vec::new();
    // Seeds of the long runs' first programs, a few of each session, and
    // the last long run's failures while the generator draws the same
    // programs from them: 510221 (a `jvp` through `ScalarToTensor` in an
    // untyped closure), 516964 (clean-up rounding at a 1e8 cancellation);
    // 2000, 2057 (vmap of reductions of scalar examples: `axis=()` and
    // `axis=-1` named the batch axis), 9017 (vmap of `BroadcastTo` of a
    // lower rank).
    for seed in (1..=6)
        .chain(1000..1004)
        .chain([510221, 516964, 2000, 2057, 9017])
    {
        if let Some((p, f)) = gradgen::run_one(seed, &cands, &mut counts) {
            failures.push(format!(
                "seed {seed}: {:?} (order {}): {}\n{}",
                f.kind,
                f.order,
                f.message.lines().next().unwrap_or(""),
                p.text()
            ));
        }
    }
    eprintln!("{counts:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(counts.checked >= 5, "{counts:?}");
}
