// torch_idle: the "bare LibTorch process" that the memory benchmark compares infera's
// idle RSS with (targets.md P7). It initialises LibTorch the way a server does (one
// tensor op, so the allocator, thread pool and oneDNN/OpenBLAS are loaded), prints
// "ready" and sleeps until killed. bench/scenarios.py reads its VmRSS from /proc.
#include <unistd.h>

#include <cstdio>

#include <torch/torch.h>

int main() {
  at::set_num_threads(1);
  const at::Tensor x = torch::ones({64, 64});
  const at::Tensor y = torch::matmul(x, x);
  std::printf("ready %.0f\n", y.sum().item<double>());
  std::fflush(stdout);
  for (;;) pause();
}
