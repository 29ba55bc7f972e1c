//! The fuzz targets: what each format's reader must do with any input. Shared
//! by the stable mutation loop (`crates/mirdsl/tests/fuzz.rs`, run by `cargo
//! test`) and the cargo-fuzz targets (`fuzz/fuzz_targets/`).
//!
//! Each function panics on a bug (the reader panicked, or broke a property
//! checked here) and otherwise says whether the input was accepted.

/// What one run of a target says of an input it did not fail on.
pub enum Verdict {
    /// Accepted (imported, parsed...): kept in the corpus to mutate further.
    Accepted,
    Rejected,
}

fn check_text(text: &str) {
    let analysis = analysis::analyze(text);
    std::hint::black_box(analysis.diagnostics.len());
}

pub fn run_mindir(input: &[u8]) -> Verdict {
    let opts = interop::WeightOptions::default();
    match interop::mindir::import(input, &opts) {
        Ok(imported) => {
            check_text(&imported.text);
            if let Some(bytes) = imported.safetensors() {
                for name in tensor::safetensors::names(&bytes).expect("the weights it wrote") {
                    tensor::safetensors::read(&bytes, &name).expect("a weight it wrote");
                }
            }
            Verdict::Accepted
        }
        Err(e) => {
            std::hint::black_box(e.to_string());
            Verdict::Rejected
        }
    }
}

pub fn run_ir(input: &[u8]) -> Verdict {
    let text = String::from_utf8_lossy(input);
    let opts = interop::WeightOptions::default();
    match interop::ir_text::import(&text, &opts) {
        Ok(imported) => {
            check_text(&imported.text);
            Verdict::Accepted
        }
        Err(e) => {
            std::hint::black_box(e.to_string());
            Verdict::Rejected
        }
    }
}

pub fn run_npy(input: &[u8]) -> Verdict {
    match tensor::npy::read(input) {
        Ok(t) => {
            // What it reads, it writes, and reads back the same.
            let bytes = tensor::npy::write(&t);
            let back = tensor::npy::read(&bytes).expect("its own output reads");
            assert_eq!(
                tensor::npy::write(&back),
                bytes,
                "a round trip changed the data"
            );
            Verdict::Accepted
        }
        Err(_) => Verdict::Rejected,
    }
}

pub fn run_safetensors(input: &[u8]) -> Verdict {
    let Ok(names) = tensor::safetensors::names(input) else {
        return Verdict::Rejected;
    };
    let mut any = false;
    for name in names.iter().take(16) {
        if let Ok(t) = tensor::safetensors::read(input, name) {
            std::hint::black_box(t.numel());
            any = true;
        }
    }
    if any {
        Verdict::Accepted
    } else {
        Verdict::Rejected
    }
}

pub fn run_fmt(input: &[u8]) -> Verdict {
    let text = String::from_utf8_lossy(input);
    check_text(&text);
    match fmt::format(&text) {
        Ok(once) => {
            let reparsed = syntax::parse(&once);
            assert!(
                reparsed.errors().is_empty(),
                "formatted text has syntax errors: {:?}",
                reparsed.errors()
            );
            assert_eq!(
                fmt::format(&once).as_deref(),
                Ok(once.as_str()),
                "not idempotent"
            );
            Verdict::Accepted
        }
        Err(_) => Verdict::Rejected,
    }
}
