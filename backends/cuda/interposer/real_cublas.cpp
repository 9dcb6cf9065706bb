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

/// Where the cuBLAS symbols were found ([0]) and the cuBLASLt ones ([1]).
std::string& found_path(bool lt) {
  static std::string* p = new std::string[2];
  return p[lt ? 1 : 0];
}

/// The cuBLASLt functions live in their own library.
bool is_lt(const char* name) { return std::strncmp(name, "cublasLt", 8) == 0; }

/// This library's own file, so that the search never returns our own definitions.
std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&real_symbol), &info) && info.dli_fname) {
    return info.dli_fname;
  }
  return "";
}

/// Paths of the libcublas.so* objects mapped into the process (with `lt`, the
/// libcublasLt.so* ones).
std::vector<std::string> mapped_cublas(bool lt) {
  struct Search {
    const char* prefix;
    std::vector<std::string> paths;
  } search{lt ? "libcublasLt.so" : "libcublas.so", {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* s = static_cast<Search*>(data);
        const char* path = info->dlpi_name;
        if (path == nullptr || *path == '\0') return 0;
        const char* base = std::strrchr(path, '/');
        base = base ? base + 1 : path;
        if (std::strncmp(base, s->prefix, std::strlen(s->prefix)) == 0) s->paths.push_back(path);
        return 0;
      },
      &search);
  return search.paths;
}

void* path_of(void* symbol, bool lt) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) found_path(lt) = info.dli_fname;
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
    for (const std::string& path : mapped_cublas(is_lt(name))) {
      if (path == self) continue;
      void* object = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
      if (object == nullptr) continue;
      symbol = dlsym(object, name);
      if (symbol) break;
    }
  }
  (*cache)[name] = path_of(symbol, is_lt(name));
  return symbol;
}

std::string real_cublas_path(bool lt) {
  std::lock_guard<std::mutex> lock(lookup_mutex());
  return found_path(lt);
}

}  // namespace ozaki_cublas
