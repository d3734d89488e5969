"""Matrix row torch-resnet: forward and backward passes of torchvision's
ResNet-18 (or, without torchvision, a small convolutional network from
torch.nn), so cuDNN's and cuBLAS's workspaces are allocated too, with MIB
of ballast held. cuDNN is held to deterministic algorithms so that the run
without the agent and the run under it can be compared.
    torch_resnet.py MIB"""
import importlib.util

from row_common import ballast_mib, finish_training, need, pressed, torch_ballast, torch_intact

torch = need("torch")
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
ballast = torch_ballast(torch, ballast_mib())
torch.manual_seed(0)
dev = torch.device("cuda")
if importlib.util.find_spec("torchvision"):
    import torchvision
    model, which = torchvision.models.resnet18(num_classes=10), "torchvision resnet18"
else:
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                          nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))
    which = "conv net from torch.nn (no torchvision)"
model = model.to(dev)
images = torch.randn(32, 3, 64, 64, generator=torch.Generator().manual_seed(1)).to(dev)
labels = torch.randint(0, 10, (32,), generator=torch.Generator().manual_seed(2)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
curve = []


def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        curve.append(loss.item())


pressed(train, 20)
finish_training(curve, torch_intact(torch, ballast), len(ballast), f"{which}: ")
