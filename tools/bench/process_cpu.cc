#include "tools/bench/process_cpu.h"

#include <sys/resource.h>
#include <unistd.h>

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <vector>
#include <sstream>
#include <string>

namespace infera::bench {

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double MachineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

namespace {

// Parent pid of `pid` (field 4 of /proc/<pid>/stat); -1 if unreadable.
int ParentPid(int pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!file || !std::getline(file, text)) return -1;
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 >= text.size()) return -1;
  return std::atoi(text.c_str() + close + 4);  // ") S PPID"
}

}  // namespace

std::optional<double> ProcessTreeCpuSeconds(int pid) {
  std::optional<double> total = ProcessCpuSeconds(pid);
  if (!total) return std::nullopt;
  std::map<int, std::vector<int>> children;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      const int child = std::atoi(entry->d_name);
      if (child > 0) children[ParentPid(child)].push_back(child);
    }
    closedir(proc);
  }
  std::vector<int> pending = children[pid];
  while (!pending.empty()) {
    const int p = pending.back();
    pending.pop_back();
    *total += ProcessCpuSeconds(p).value_or(0);
    for (int c : children[p]) pending.push_back(c);
  }
  return total;
}

std::optional<double> ProcessCpuSeconds(int pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!file || !std::getline(file, text)) return std::nullopt;
  // Fields after the parenthesised command name (which may contain spaces): state is
  // field 3, utime 14, stime 15.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int index = 3; index <= 15 && rest >> field; ++index) {
    if (index == 14) utime = std::stoull(field);
    if (index == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace infera::bench
