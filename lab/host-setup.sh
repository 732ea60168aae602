#!/usr/bin/env bash
# Install from Debian everything the kafkaops lab needs on a fresh machine (Debian bookworm,
# run as root). Idempotent: packages already installed are skipped, and `apt-get update`
# runs (once) only when something is missing. Python tools (ansible-core, molecule,
# containers.podman) come from requirements/, not from here.
#
# usage: lab/host-setup.sh
set -euo pipefail

packages=(
    podman                       # container engine
    runc                         # OCI runtime used by lab/containers.conf (crun fails here)
    conmon                       # container monitor
    netavark                     # network backend
    aardvark-dns                 # container-name DNS on user networks (kafka-a1 -> IP)
    iptables                     # netavark's NAT / firewall rules
    uidmap                       # newuidmap/newgidmap (podman expects them)
    catatonit                    # podman's --init helper
    golang-github-containers-common  # seccomp.json, default policy/registries
    debootstrap                  # lab/image/build.sh: Debian rootfs
    debian-archive-keyring       # debootstrap verifies the archive with it
    ca-certificates
    openssl                      # tests/live/tls.py, tests/golden/render.py: throw-away CA and certificates
    tar
    gzip
    util-linux                   # mountpoint; unshare for tests/golden/render.py
    iproute2                     # ip: the golden files' private network (tests/golden/render.py)
    coreutils                    # sha256sum
    mawk                         # awk in build.sh
    shellcheck                   # ansible-test sanity checks the shell scripts with it
    openssh-client               # Ansible, Molecule and testinfra reach the lab hosts over SSH
    maven                        # lab/kafka-dist/assemble.sh, lab/spark/fetch.sh: jars from Maven Central
    openjdk-17-jdk-headless      # Kafka for the live-broker tests, javac for tests/integration/java, Maven
    krb5-kdc                     # the live-broker tests' real Kerberos KDC (tests/live/kdc.py)
    krb5-admin-server            # kadmin.local: its principals and keytabs
    libkrb5-dev                  # builds the gssapi wheel (kafka-python's GSSAPI; PyPI has no Linux wheel)
    gcc                          # the same build
)

if [[ $EUID -ne 0 ]]; then
    echo "host-setup.sh: run as root" >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
    [[ "$status" == ii* ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "host-setup: all ${#packages[@]} packages already installed"
else
    echo "host-setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# podman on this kind of machine: cgroup v1 + name=systemd, no systemd as PID 1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONTAINERS_CONF="$repo/lab/containers.conf" podman info --format \
    'podman {{.Version.Version}}: runtime {{.Host.OCIRuntime.Name}}, network {{.Host.NetworkBackend}}, cgroups {{.Host.CgroupsVersion}}/{{.Host.CgroupManager}}'
