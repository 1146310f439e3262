#!/bin/sh
# Prints the include directories (`incdirs`) or the link flags (`libs`) of the MPI library whose
# compiler wrapper is $VCOLL_MPICC (default: mpicc on the PATH), for binding.gyp. Open MPI's
# wrapper answers --showme:incdirs / --showme:link; MPICH's (and Intel MPI's) prints its whole
# command line with -show, from which the -I / -L / -l / -Wl flags are taken.
set -e
cc="${VCOLL_MPICC:-mpicc}"
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "vcoll: no MPI compiler wrapper '$cc' on the PATH: install Open MPI (apt-get install openmpi-bin libopenmpi-dev) or MPICH (apt-get install mpich libmpich-dev), or set VCOLL_MPICC" >&2
  exit 1
fi
if "$cc" --showme:incdirs >/dev/null 2>&1; then
  case "$1" in
    incdirs) "$cc" --showme:incdirs ;;
    libs) "$cc" --showme:link ;;
  esac
  exit 0
fi
line="$("$cc" -show)"
out=""
for w in $line; do
  case "$1:$w" in
    incdirs:-I*) out="$out ${w#-I}" ;;
    libs:-L*|libs:-l*|libs:-Wl,*) out="$out $w" ;;
  esac
done
echo $out
