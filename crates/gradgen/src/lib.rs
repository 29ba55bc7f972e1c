//! `gradgen`: random well-typed programs that check mirdsl's automatic
//! differentiation against itself (issue #12). See [`gen`] for what the
//! programs are made of and [`check`] for what each must satisfy;
//! [`minimize`] shrinks a failing program to one that fails the same way.
//!
//! `cargo test -p gradgen` checks a bounded number of programs;
//! `cargo run --release -p gradgen -- --minutes N` hunts for longer.

pub mod check;
pub mod gen;
pub mod rng;

pub use check::{check, Counts, Failure, Kind, Outcome};
pub use gen::{candidates, Candidate, Program};

/// The program of `seed`.
pub fn program(seed: u64, cands: &[Candidate]) -> Program {
    gen::Generator::new(seed, cands).program(seed)
}

/// Checks the program of `seed`, counting into `counts`; a failure comes
/// back with its program.
pub fn run_one(seed: u64, cands: &[Candidate], counts: &mut Counts) -> Option<(Program, Failure)> {
    let p = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| program(seed, cands))) {
        Ok(p) => p,
        Err(_) => {
            // A panic while generating (in a shape rule the generator
            // tries): not a program to check.
            counts.discarded += 1;
            return None;
        }
    };
    counts.programs += 1;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&p)))
        .unwrap_or_else(|e| {
            let m = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Outcome::Failed(Failure {
                kind: Kind::Run,
                order: 0,
                message: format!("panic: {m}"),
            })
        });
    match outcome {
        Outcome::Passed { first, second } => {
            counts.checked += 1;
            counts.first_order += first;
            counts.second_order += second;
            None
        }
        Outcome::Discarded(_) => {
            counts.discarded += 1;
            None
        }
        Outcome::Failed(f) => {
            counts.failures += 1;
            Some((p, f))
        }
    }
}

fn fails_like(p: &Program, kind: &Kind, order: usize) -> bool {
    matches!(check(p), Outcome::Failed(f) if f.kind == *kind && f.order == order)
}

/// A smaller program that fails the same way (kind and order): statements
/// are dropped (their uses taking an earlier value of the same type), and
/// outputs, until nothing more can go.
pub fn minimize(p: &Program, f: &Failure) -> Program {
    let mut best = p.clone();
    let mut budget = 400;
    loop {
        let mut improved = false;
        for cand in shrinks(&best) {
            if budget == 0 {
                return best;
            }
            budget -= 1;
            if fails_like(&cand, &f.kind, f.order) {
                best = cand;
                improved = true;
                break;
            }
        }
        if !improved {
            return best;
        }
    }
}

/// One-step smaller variants of a program, most promising first.
fn shrinks(p: &Program) -> Vec<Program> {
    use gen::{mentions, replace_ident, Ty};
    let mut out = Vec::new();
    if p.extra.is_some() {
        let mut q = p.clone();
        q.extra = None;
        out.push(q);
    }
    for i in 0..p.outputs.len() {
        if p.outputs.len() > 1 {
            let mut q = p.clone();
            q.outputs.remove(i);
            out.push(q);
        }
    }
    for i in (0..p.stmts.len()).rev() {
        let s = &p.stmts[i];
        let later_uses = p.stmts[i + 1..].iter().any(|t| mentions(&t.expr, &s.name))
            || p.outputs.contains(&s.name)
            || p.extra.as_ref() == Some(&s.name);
        let mut q = p.clone();
        let removed = q.stmts.remove(i);
        if !later_uses {
            out.push(q);
            continue;
        }
        // A substitute of the same type, defined before.
        let Ty::F(shape) = &removed.ty else { continue };
        let subst = p
            .params
            .iter()
            .filter(|(_, s)| s == shape)
            .map(|(n, _)| n.clone())
            .chain(
                p.stmts[..i]
                    .iter()
                    .filter(|t| t.ty == Ty::F(shape.clone()))
                    .map(|t| t.name.clone()),
            )
            .next();
        let Some(subst) = subst else { continue };
        for t in &mut q.stmts[i..] {
            t.expr = replace_ident(&t.expr, &removed.name, &subst);
        }
        for o in &mut q.outputs {
            if *o == removed.name {
                *o = subst.clone();
            }
        }
        if q.extra.as_ref() == Some(&removed.name) {
            q.extra = Some(subst.clone());
        }
        q.outputs.dedup();
        out.push(q);
    }
    // Parameters nothing uses any more.
    let text = p.text();
    for (i, (n, _)) in p.params.iter().enumerate() {
        if p.params.len() > 1 && identifier_count(&text, n) == 1 {
            let mut q = p.clone();
            q.params.remove(i);
            out.push(q);
        }
    }
    out
}

fn identifier_count(text: &str, name: &str) -> usize {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .filter(|t| *t == name)
        .count()
}
