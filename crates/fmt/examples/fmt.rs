fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    match fmt::format(&text) {
        Ok(t) => print!("{t}"),
        Err(e) => println!("{e:?}"),
    }
}
