"""A tiny network whose compile dumps the editor tests open (testdata/irdumps/tiny).

    cd testdata/irdumps/tiny && python3 model.py      # MindSpore 2.10, CPU

writes every stage MindSpore dumps (save_graphs=2, 135 files) under dump/; four are kept
(see ../README.md): 22_backend_pass_0077, hwopt_cpu_custom_optimization_after_graph_0_0106,
hwopt_comm_after_kernel_select_kernel_graph0_0112 (Muls became Mul) and 24_execute_0130.
The kept ones were made in another folder: their frames name a model.py that is not
there, and the editors find this one next to the dump folder.
"""
import numpy as np
import mindspore as ms
from mindspore import nn, ops


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.act = nn.ReLU()

    def construct(self, x):
        h = self.fc(x)
        return self.act(h) * 2.0


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def construct(self, x):
        y = self.block(x)
        return ops.reduce_sum(y + 1.0)


if __name__ == "__main__":
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", save_graphs=2, save_graphs_path="dump")
    ms.set_seed(0)
    net = Net()
    print(net(ms.Tensor(np.ones((2, 4), np.float32))))
