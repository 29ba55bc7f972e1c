fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let a = analysis::analyze(&text);
    for d in &a.diagnostics {
        let line = text[..usize::from(d.range.start())].matches('\n').count() + 1;
        println!(
            "{}:{} {} {}",
            line,
            d.code.as_str(),
            d.message,
            d.related
                .iter()
                .map(|r| r.message.clone())
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    let mut names: Vec<_> = a.entries.keys().collect();
    names.sort();
    for n in names {
        let e = &a.entries[n];
        println!(
            "{n}: ({}) -> {}",
            e.params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            e.output
                .as_ref()
                .map(|o| o.to_string())
                .unwrap_or("⊥".into())
        );
    }
}
