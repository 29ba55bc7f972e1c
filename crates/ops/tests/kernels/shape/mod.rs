mod edges;
mod reference;
