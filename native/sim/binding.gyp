{
  "targets": [
    {
      "target_name": "vcoll_sim",
      "sources": ["vcoll_sim.c"],
      "cflags": ["-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
