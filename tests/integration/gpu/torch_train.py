"""Unmodified PyTorch under the agent: a small training loop, then a check
that the loss fell and the weights are finite. Optional argument: GiB of
extra tensors to hold while training (to be evicted under pressure)."""
import sys
import torch

hold_gib = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
dev = torch.device("cuda")
ballast = [torch.full((256, 1024, 1024), float(i), device=dev) for i in range(int(hold_gib))]
torch.manual_seed(0)
x = torch.randn(4096, 512, device=dev)
y = (x @ torch.randn(512, 1, device=dev)).tanh()
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
first = None
for step in range(300):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    first = first if first is not None else loss.item()
last = loss.item()
intact = all(bool((b == float(i)).all()) for i, b in enumerate(ballast))
ok = last < first * 0.5 and all(torch.isfinite(p).all() for p in model.parameters()) and intact
print(f"{'ok' if ok else 'bad'} loss {first:.4f} -> {last:.4f} ballast {'intact' if intact else 'CORRUPT'}")
sys.exit(0 if ok else 1)
