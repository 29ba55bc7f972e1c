//! How much of MindSpore 2.10's op set the registry implements: printed for
//! the record (`cargo test -p ops --test census -- --nocapture`), and held to
//! the floor issue #11 sets (250 primitives with a shape rule, a gradient
//! rule or a principled "no gradient", and a CPU kernel).

use ops::Category;

#[test]
fn registry_census() {
    let all = ops::registry();
    let count = |f: &dyn Fn(&ops::OpDef) -> bool| all.values().filter(|o| f(o)).count();
    let public = |o: &ops::OpDef| {
        !matches!(
            o.category,
            Category::Internal | Category::Structure | Category::Composite
        )
    };
    let kernels = count(&|o| public(o) && o.kernel.is_some());
    let with_grad = count(&|o| public(o) && o.kernel.is_some() && o.grad.is_some());
    let internal = count(&|o| o.category == Category::Internal);
    let composites = count(&|o| o.category == Category::Composite);
    eprintln!(
        "registry: {} entries; {kernels} public primitives with a shape rule and a CPU kernel, \
         {with_grad} of them with a gradient rule; {composites} composites; {internal} internal helpers",
        all.len()
    );
    assert!(
        kernels >= 250,
        "issue #11 asks for at least 250 implemented primitives; there are {kernels}"
    );
}
