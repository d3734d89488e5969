"""Matrix row torch-graphs: a training step captured once as a CUDA graph
(torch.cuda.graph) and replayed, with MIB of ballast held; the graph's
memory comes from the pool PyTorch keeps for it.
    torch_graphs.py MIB"""
from row_common import ballast_mib, finish_training, need, pressed, torch_ballast, torch_intact

torch = need("torch")
ballast = torch_ballast(torch, ballast_mib())
torch.manual_seed(0)
dev = torch.device("cuda")
inputs = torch.randn(8, 1024, 256, device=dev)
targets = inputs.sum(dim=2, keepdim=True).tanh()
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
static_x, static_y = inputs[0].clone(), targets[0].clone()

# Warm up on a side stream before capture, as torch.cuda.graph requires.
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.mse_loss(model(static_x), static_y).backward()
        opt.step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(graph):
    static_loss = torch.nn.functional.mse_loss(model(static_x), static_y)
    static_loss.backward()
    opt.step()
curve = []


def replay(steps):
    for step in range(steps):
        static_x.copy_(inputs[step % len(inputs)])
        static_y.copy_(targets[step % len(targets)])
        graph.replay()
        curve.append(static_loss.item())


pressed(replay, 100)
finish_training(curve, torch_intact(torch, ballast), len(ballast), "graph replays: ", every=10)
