{
  "targets": [
    {
      "target_name": "vcoll_mpi",
      "sources": ["vcoll_mpi.c"],
      "include_dirs": ["<!@(sh mpi-flags.sh incdirs)"],
      "libraries": ["<!@(sh mpi-flags.sh libs)"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
