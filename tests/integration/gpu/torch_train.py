"""Matrix rows torch-default, torch-expandable and torch-async: unmodified
PyTorch trains a small network while MIB of ballast tensors are held, then
checks the loss fell and the ballast is intact. The allocator is whatever
PYTORCH_CUDA_ALLOC_CONF says (matrix.sh sets it per row).
    torch_train.py MIB"""
from row_common import ballast_mib, finish_training, need, pressed, torch_ballast, torch_intact

torch = need("torch")
ballast = torch_ballast(torch, ballast_mib())
torch.manual_seed(0)
dev = torch.device("cuda")
x = torch.randn(4096, 512, device=dev)
y = (x @ torch.randn(512, 1, device=dev)).tanh()
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
curve = []


def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        curve.append(loss.item())


pressed(train, 150)
finite = all(bool(torch.isfinite(p).all()) for p in model.parameters())
finish_training(curve, torch_intact(torch, ballast), len(ballast), fell_to=0.5, every=10, healthy=finite)
