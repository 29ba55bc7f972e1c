mod einsum;
mod identities;
mod reference;
