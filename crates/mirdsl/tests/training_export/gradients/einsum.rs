//! An Einsum operand's gradient with repeated or private letters
//! (`_EinsumEmbed`): transposed, broadcast and masked onto the diagonal.
//! MindSpore 2.10's CPU has no Einsum kernel: the export is checked by
//! importing it back.

use super::{export_and_run_the_same, Case};
use crate::floats;

#[test]
fn einsum_gradients_export_and_run_the_same() {
    const NO_KERNEL: &str = "MindSpore 2.10's CPU has no Einsum kernel";
    let x = || floats("x", &[3, 3], 60);
    let y = || floats("y", &[3, 3, 2], 61);
    let cases = [
        ("Einsum((x,), equation=\"ii->i\")", vec![x()]),
        ("Einsum((x,), equation=\"ii\")", vec![x()]),
        ("Einsum((x,), equation=\"ij->i\")", vec![x()]),
        ("Einsum((y, x), equation=\"iij,ik->jk\")", vec![y(), x()]),
        ("Einsum((y, x), equation=\"kij,kl->jl\")", vec![y(), x()]),
    ];
    let cases: Vec<Case> = cases
        .into_iter()
        .map(|(op, inputs)| Case::new(op, inputs).not_on_mindspore_cpu(NO_KERNEL))
        .collect();
    export_and_run_the_same("einsum", &cases);
}
