#!/usr/bin/env bash
# Build the lab's systemd host image localhost/kafkaops-lab from Debian bookworm with
# debootstrap, then `podman import` it (no image registry is needed or reachable).
#
# The image is tagged localhost/kafkaops-lab:<recipe-hash> and :latest, where the recipe hash
# is a hash of this script plus packages.txt. When an image with the current hash exists the
# script only makes sure :latest points at it and exits 0.
#
# usage: lab/image/build.sh [--force]          (as root)
# env:   KAFKAOPS_LAB_CACHE   work/cache dir (default <repo>/.cache/lab-image)
#        KAFKAOPS_LAB_MIRROR  Debian mirror URL for debootstrap (default: the bookworm
#                             mirror in this machine's apt sources, else debootstrap's own)
set -euo pipefail

start=$SECONDS
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$repo/lab/containers.conf}"

IMAGE=localhost/kafkaops-lab
SUITE=bookworm
force=0
[[ "${1:-}" == "--force" ]] && force=1

elapsed() { echo "elapsed: $((SECONDS - start))s"; }

recipe=$(cat "$here/build.sh" "$here/packages.txt" | sha256sum | cut -c1-12)

if [[ $force -eq 0 ]] && podman image exists "$IMAGE:$recipe"; then
    want=$(podman image inspect --format '{{.Id}}' "$IMAGE:$recipe")
    have=$(podman image inspect --format '{{.Id}}' "$IMAGE:latest" 2>/dev/null || true)
    [[ "$want" == "$have" ]] || podman tag "$IMAGE:$recipe" "$IMAGE:latest"
    echo "image $IMAGE:$recipe is current (recipe unchanged); nothing to build"
    elapsed
    exit 0
fi

if [[ $EUID -ne 0 ]]; then
    echo "build.sh: must run as root (debootstrap, chroot, mounts)" >&2
    exit 1
fi
for tool in debootstrap podman chroot tar sha256sum mountpoint; do
    command -v "$tool" >/dev/null || { echo "build.sh: missing $tool; run lab/host-setup.sh" >&2; exit 1; }
done

# The first Debian mirror in this machine's apt sources that serves $SUITE (deb822 *.sources
# first, then one-line *.list). Prints nothing when none is found.
host_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -r "$f" ]] || continue
        awk -v suite="$SUITE" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = ""; uris = ""; suites = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^[ \t]*#/) continue
                    key = tolower(line); sub(/:.*/, "", key)
                    val = line; sub(/^[^:]*:[ \t]*/, "", val)
                    if (key == "types") types = val
                    else if (key == "uris") uris = val
                    else if (key == "suites") suites = val
                    else if (key == "enabled") enabled = tolower(val)
                }
                if (enabled != "no" && (" " types " ") ~ / deb / && (" " suites " ") ~ (" " suite " ")) {
                    split(uris, u, /[ \t]+/)
                    if (u[1] ~ /^https?:\/\//) { print u[1]; exit }
                }
            }' "$f"
    done
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk -v suite="$SUITE" '
        $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == suite && $i ~ /^https?:\/\//) { print $i; exit }
        }' || true
}

mirror="${KAFKAOPS_LAB_MIRROR:-$(host_mirror | head -n1 || true)}"
packages=$(sed -e 's/#.*//' "$here/packages.txt" | tr -s ' \t\n' ' ' | sed -e 's/^ //; s/ $//')

cache="${KAFKAOPS_LAB_CACHE:-$repo/.cache/lab-image}"
mkdir -p "$cache/debs/partial"
cache=$(cd "$cache" && pwd)
rootfs="$cache/rootfs-$recipe"
tarball="$cache/rootfs-$recipe.tar"

cleanup() {
    local m
    for m in "$rootfs/var/cache/apt/archives" "$rootfs/proc"; do
        if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m"; fi
    done
    # never recurse into anything still mounted below the rootfs
    if [[ -d "$rootfs" ]] && ! grep -q " $rootfs/" /proc/self/mounts; then
        rm -rf --one-file-system "$rootfs"
    fi
    rm -f "$tarball"
}
trap cleanup EXIT
cleanup   # leftovers of an interrupted run

# debootstrap and apt print about a thousand lines: they go to a log, the steps to the terminal.
log="$cache/build-$recipe.log"
: > "$log"
step() { echo "build.sh: $* ($((SECONDS - start)) s)"; }
# shellcheck disable=SC2317 # called by the ERR trap
failed() { echo "build.sh: failed; the last lines of $log:" >&2; tail -n 30 "$log" >&2; }
trap failed ERR

echo "building $IMAGE:$recipe (suite $SUITE, mirror ${mirror:-debootstrap default}); log: $log"
echo "packages: $packages"

# 1. minimal base system; .debs are kept in $cache/debs so rebuilds download less
step "debootstrap $SUITE minbase"
debootstrap --variant=minbase --cache-dir="$cache/debs" "$SUITE" "$rootfs" ${mirror:+"$mirror"} >> "$log" 2>&1

# 2. packages from packages.txt, without docs/man/locales, without starting any service
cat > "$rootfs/etc/dpkg/dpkg.cfg.d/01-kafkaops-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
cat > "$rootfs/etc/apt/apt.conf.d/01-kafkaops-norecommends" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
# openjdk's postinst registers man-page alternatives and fails without this directory
mkdir -p "$rootfs/usr/share/man/man1"
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
mount -t proc proc "$rootfs/proc"
mount --bind "$cache/debs" "$rootfs/var/cache/apt/archives"
step "apt-get install of packages.txt"
chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $packages" >> "$log" 2>&1
umount "$rootfs/var/cache/apt/archives"
umount "$rootfs/proc"
rm -f "$rootfs/usr/sbin/policy-rc.d"

# 3. systemd as PID 1 in a container: mask units that need real hardware, a console or
#    kernel mounts the container may not make, and periodic jobs a lab host doesn't want
for unit in \
    getty.target console-getty.service getty@.service serial-getty@.service \
    systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket \
    systemd-udev-trigger.service systemd-udev-settle.service systemd-hwdb-update.service \
    systemd-modules-load.service systemd-remount-fs.service systemd-firstboot.service \
    systemd-journald-audit.socket systemd-logind.service \
    sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount \
    sys-fs-fuse-connections.mount dev-hugepages.mount \
    apt-daily.timer apt-daily-upgrade.timer fstrim.timer e2scrub_all.timer e2scrub_reap.service
do
    ln -sfn /dev/null "$rootfs/etc/systemd/system/$unit"
done
ln -sfn /lib/systemd/system/multi-user.target "$rootfs/etc/systemd/system/default.target"
# Prometheus runs only on the lab's monitoring host (lab/monitoring.yml enables it there); its
# package enables it on every host otherwise.
rm -f "$rootfs/etc/systemd/system/multi-user.target.wants/prometheus.service"

# 3b. sshd, as on a datacenter host: each container makes its own host keys at boot (none are
#     baked into the image, so no two hosts share one); pam_loginuid cannot write
#     /proc/self/loginuid without CAP_AUDIT_CONTROL and would refuse every login, so it is
#     optional here. Root logs in with the lab key only (lab/up.yml mounts the public key).
rm -f "$rootfs"/etc/ssh/ssh_host_*
mkdir -p "$rootfs/etc/systemd/system/ssh.service.d"
printf '%s\n' '[Service]' 'ExecStartPre=' 'ExecStartPre=/usr/bin/ssh-keygen -A' 'ExecStartPre=/usr/sbin/sshd -t' \
    > "$rootfs/etc/systemd/system/ssh.service.d/10-kafkaops-lab-hostkeys.conf"
sed -i -E 's/^(session[[:space:]]+)required([[:space:]]+pam_loginuid\.so)/\1optional\2/' "$rootfs/etc/pam.d/sshd"
printf '%s\n' 'PermitRootLogin prohibit-password' 'PasswordAuthentication no' \
    'KbdInteractiveAuthentication no' 'UseDNS no' > "$rootfs/etc/ssh/sshd_config.d/10-kafkaops-lab.conf"
ln -sfn /lib/systemd/system/ssh.service "$rootfs/etc/systemd/system/multi-user.target.wants/ssh.service"

# 4. per-container identity comes at run time; drop caches and junk
: > "$rootfs/etc/machine-id"
rm -f "$rootfs/var/lib/dbus/machine-id"
: > "$rootfs/etc/hostname"
: > "$rootfs/etc/resolv.conf"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
       "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old \
       "$rootfs"/tmp/* "$rootfs"/var/tmp/* "$rootfs"/var/log/apt/* "$rootfs"/var/log/*.log
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
mkdir -p "$rootfs/usr/share/man/man1"
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +

# 5. import
step "podman import"
tar --numeric-owner --xattrs --xattrs-include='*' -C "$rootfs" -cf "$tarball" .
podman import \
    --change 'CMD ["/sbin/init"]' \
    --change 'ENV container=podman' \
    --change 'STOPSIGNAL SIGRTMIN+3' \
    --change "LABEL io.kafkaops.lab.recipe=$recipe" \
    --message "kafkaops lab image, recipe $recipe" \
    "$tarball" "$IMAGE:$recipe" >/dev/null
podman tag "$IMAGE:$recipe" "$IMAGE:latest"

# older recipes' tags (kept if a container still uses them)
podman images --format '{{.Repository}}:{{.Tag}}' "$IMAGE" | while read -r ref; do
    case "$ref" in "$IMAGE:$recipe" | "$IMAGE:latest") ;; *) podman rmi "$ref" >/dev/null 2>&1 || true ;; esac
done
# the untagged previous image of a --force rebuild
podman image prune --force --filter label=io.kafkaops.lab.recipe >/dev/null 2>&1 || true

echo "built $IMAGE:$recipe and $IMAGE:latest ($(podman image inspect --format '{{.Size}}' "$IMAGE:$recipe" | awk '{printf "%.0f MB", $1/1e6}'))"
elapsed
