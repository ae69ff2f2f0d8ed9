#!/usr/bin/env bash
# Open MPI in a folder, for a machine that has none and no package registry (a GPU machine cut
# off from the network): run this where apt works (Debian 12, as CI), carry the folder over, and there
#   source FOLDER/env.sh      # mpirun, mpicxx and the libraries from FOLDER
#   cmake ... -DMPI_CXX_COMPILER="$OMPI_FOLDER/usr/bin/mpicxx"   # PTXRT_MPI=ON against it
# The Debian packages of Open MPI 4.1 and the libraries it loads, unpacked (dpkg -x) into FOLDER
# (about 35 MB); env.sh points Open MPI (OPAL_*), its launcher interface (PMIx), the loader and
# PATH at them, wherever FOLDER is moved to. The target needs glibc 2.36 or newer and the base
# libraries every distribution has (libstdc++, libgcc, libatomic, zlib, libudev, libuuid).
#   scripts/openmpi-folder.sh FOLDER      (build-openmpi inside the checkout is ignored by git)
set -euo pipefail
folder=${1:?usage: scripts/openmpi-folder.sh FOLDER}
mkdir -p "$folder/debs"
folder=$(realpath "$folder")
packages=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 ibverbs-providers
  librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1)
(cd "$folder/debs" && apt-get download "${packages[@]}")
for package in "$folder"/debs/*.deb; do dpkg -x "$package" "$folder"; done
rm -r "$folder/debs"
# The links the packages' install scripts would make (update-alternatives, ldconfig).
ln -sf orterun "$folder/usr/bin/mpirun"
ln -sf orterun "$folder/usr/bin/mpiexec"
ln -sf opal_wrapper "$folder/usr/bin/mpicc"
ln -sf opal_wrapper "$folder/usr/bin/mpicxx"
ln -sf ../libpsm1/libpsm_infinipath.so.1.16 "$folder/usr/lib/x86_64-linux-gnu/libpsm_infinipath.so.1"
cat >"$folder/env.sh" <<'EOF'
# Open MPI from this folder (scripts/openmpi-folder.sh made it): source it.
OMPI_FOLDER=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OMPI_FOLDER
export OPAL_PREFIX=$OMPI_FOLDER/usr
export OPAL_LIBDIR=$OMPI_FOLDER/usr/lib/x86_64-linux-gnu/openmpi/lib
export OPAL_INCLUDEDIR=$OMPI_FOLDER/usr/lib/x86_64-linux-gnu/openmpi/include
export OPAL_DATADIR=$OMPI_FOLDER/usr/share/openmpi
export OPAL_PKGDATADIR=$OMPI_FOLDER/usr/share/openmpi
export OPAL_SYSCONFDIR=$OMPI_FOLDER/etc/openmpi
# PMIx, Open MPI's launcher interface, finds its plugins by a path of its own.
export PMIX_MCA_mca_base_component_path=$OMPI_FOLDER/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
export PATH=$OMPI_FOLDER/usr/bin:$PATH
export LD_LIBRARY_PATH=$OMPI_FOLDER/usr/lib/x86_64-linux-gnu:$OMPI_FOLDER/usr/lib/x86_64-linux-gnu/openmpi/lib:$OMPI_FOLDER/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
EOF
echo "openmpi-folder: $(du -sh "$folder" | cut -f1) in $folder; source $folder/env.sh to use it"
