//! Renders every top-level graph of a `.mir` file to SVG, timing each layout.
//!
//! `cargo run -p graphview --example render -- FILE.mir OUT_DIR`
//! `cargo run --release -p graphview --example render -- --synthetic 500 OUT_DIR`
//! (the second lays out a generated 500-node graph: the timing sanity check).

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: render FILE.mir OUT_DIR | render --synthetic N OUT_DIR");
        std::process::exit(2);
    }
    let out_dir = std::path::PathBuf::from(&args[1]);
    std::fs::create_dir_all(&out_dir).unwrap();
    if let Some(n) = args[0].strip_prefix("--synthetic=").or(None) {
        synthetic(n.parse().unwrap(), &out_dir);
        return;
    }
    if args[0] == "--synthetic" {
        eprintln!("use --synthetic=N");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[0]).unwrap();
    let fa = analysis::analyze(&text);
    for name in &fa.source.order {
        let body = &fa.source.graphs[name].body;
        let type_of = |n: ir::NodeId| {
            let mut v: Vec<String> = fa
                .values_of(name, n)
                .iter()
                .map(|v| v.to_string())
                .collect();
            v.dedup();
            (!v.is_empty()).then(|| v.join(" | "))
        };
        let t = Instant::now();
        let model = graphview::from_body(body, &type_of);
        let lay = graphview::layout(&model);
        let svg = graphview::svg::render(&model, &lay);
        println!(
            "{name}: {} nodes, {} edges, {} clusters: {:.2} ms",
            model.nodes.len(),
            model.edges.len(),
            model.clusters.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        std::fs::write(out_dir.join(format!("{name}.svg")), svg).unwrap();
    }
}

fn synthetic(n: usize, out_dir: &std::path::Path) {
    let model = graphview::svg_bench_model(n);
    let t = Instant::now();
    let lay = graphview::layout(&model);
    let dt = t.elapsed();
    let svg = graphview::svg::render(&model, &lay);
    println!(
        "synthetic: {} nodes, {} edges, {} clusters: layout {:.1} ms, svg {} bytes",
        model.nodes.len(),
        model.edges.len(),
        model.clusters.len(),
        dt.as_secs_f64() * 1e3,
        svg.len()
    );
    std::fs::write(out_dir.join("synthetic.svg"), svg).unwrap();
}
