mod reference;
mod semantics;
