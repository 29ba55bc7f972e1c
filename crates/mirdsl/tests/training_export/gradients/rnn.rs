//! The `LSTM` primitive's gradient is MindSpore's CPU `LSTMGrad`, which
//! reads the forward's outputs (its oneDNN workspace, `reserve`, in
//! MindSpore).

use super::{export_and_run_the_same, Case};
use crate::floats;

#[test]
fn lstm_gradients_export_and_run_the_same() {
    // I = 2, H = 3: one direction's weights are 4H·I + 4H·H + 4H = 72.
    let one = "LSTM(x, h, c, w, 2, 3, 1, true, false, 0.0)[0]";
    let two = "LSTM(x, h, c, w, 2, 3, 1, true, true, 0.0)[1]";
    let inputs = |dirs: usize, first_w: bool| {
        let (x, h, c, w) = (
            floats("x", &[4, 2, 2], 41),
            floats("h", &[dirs, 2, 3], 42),
            floats("c", &[dirs, 2, 3], 43),
            floats("w", &[72 * dirs, 1, 1], 44),
        );
        if first_w {
            vec![w, x, h, c]
        } else {
            vec![x, h, c, w]
        }
    };
    export_and_run_the_same(
        "rnn",
        &[
            Case::new(one, inputs(1, false)),
            Case::new(one, inputs(1, true)),
            Case::new(two, inputs(2, true)),
        ],
    );
}
