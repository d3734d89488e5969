"""Matrix rows jax-prealloc and jax-noprealloc: JAX fits a small network
with MIB of ballast arrays held. By default JAX preallocates 75% of the
memory cuMemGetInfo reports (under the agent, the job's view);
XLA_PYTHON_CLIENT_PREALLOCATE=false makes it allocate as it goes
(matrix.sh sets it per row).
    jax_train.py MIB"""
from row_common import ballast_mib, finish_training, need, pressed, skip

jax = need("jax")
jnp = jax.numpy
if not any(d.platform == "gpu" for d in jax.devices()):
    skip(f"JAX has no GPU backend here (devices: {jax.devices()})")
ballast = [jnp.full((16 << 20,), i, dtype=jnp.float32) for i in range(ballast_mib() // 64)]
kx, kw, k1, k2 = jax.random.split(jax.random.PRNGKey(0), 4)
x = jax.random.normal(kx, (4096, 256))
y = jnp.tanh(x @ jax.random.normal(kw, (256, 1)))
params = {"w1": jax.random.normal(k1, (256, 512)) * 0.05, "w2": jax.random.normal(k2, (512, 1)) * 0.05}


def loss_fn(p):
    return jnp.mean((jnp.maximum(x @ p["w1"], 0) @ p["w2"] - y) ** 2)


@jax.jit
def step(p):
    loss, grads = jax.value_and_grad(loss_fn)(p)
    return jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, p, grads), loss


curve = []


def train(steps):
    global params
    for _ in range(steps):
        params, loss = step(params)
        curve.append(float(loss))


pressed(train, 100)
intact = all(bool((b == i).all()) for i, b in enumerate(ballast))
finish_training(curve, intact, len(ballast), fell_to=0.5, every=10)
