// The real cuBLAS symbols (real_cublas.hpp).
#include "real_cublas.hpp"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace ozaki_cublas {
namespace {

std::mutex& lookup_mutex() {
  static std::mutex* m = new std::mutex;  // never destroyed: calls may come during exit
  return *m;
}

std::string& found_path() {
  static std::string* p = new std::string;
  return *p;
}

/// This library's own file, so that the search never returns our own definitions.
std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&real_symbol), &info) && info.dli_fname) {
    return info.dli_fname;
  }
  return "";
}

/// Paths of the libcublas.so* objects mapped into the process (not libcublasLt).
std::vector<std::string> mapped_cublas() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* path = info->dlpi_name;
        if (path == nullptr || *path == '\0') return 0;
        const char* base = std::strrchr(path, '/');
        base = base ? base + 1 : path;
        if (std::strncmp(base, "libcublas.so", 12) == 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(path);
        }
        return 0;
      },
      &paths);
  return paths;
}

void* path_of(void* symbol) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) found_path() = info.dli_fname;
  return symbol;
}

}  // namespace

void* real_symbol(const char* name) {
  std::lock_guard<std::mutex> lock(lookup_mutex());
  static auto* cache = new std::map<std::string, void*>;
  auto hit = cache->find(name);
  if (hit != cache->end()) return hit->second;
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    const std::string self = own_path();
    for (const std::string& path : mapped_cublas()) {
      if (path == self) continue;
      void* object = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
      if (object == nullptr) continue;
      symbol = dlsym(object, name);
      if (symbol) break;
    }
  }
  (*cache)[name] = path_of(symbol);
  return symbol;
}

std::string real_cublas_path() {
  std::lock_guard<std::mutex> lock(lookup_mutex());
  return found_path();
}

}  // namespace ozaki_cublas
