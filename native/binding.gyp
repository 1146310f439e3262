{
  "targets": [
    {
      "target_name": "vcoll_mpi",
      "sources": ["vcoll_mpi.c", "vcoll_mpi_schedule.c", "vcoll_mpi_combine.c"],
      "include_dirs": ["<!@(sh mpi-flags.sh incdirs)"],
      "libraries": ["<!@(sh mpi-flags.sh libs)"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    },
    {
      "target_name": "vcoll_mpi_fast",
      "sources": ["vcoll_mpi_fast.cc"],
      "include_dirs": ["<!@(sh mpi-flags.sh incdirs)"],
      "libraries": ["<!@(sh mpi-flags.sh libs)", "-ldl"],
      "cflags_cc": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-cast-function-type"],
      "defines": ["OMPI_SKIP_MPICXX=1", "MPICH_SKIP_MPICXX=1"]
    }
  ]
}
