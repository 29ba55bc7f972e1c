fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let parse = syntax::parse(&text);
    print!("{}", parse.debug_dump());
}
