#!/usr/bin/env bash
# Install, from Debian's packages, whatever agentgate needs to build and
# run its demo (and with --tests, its whole suite) and is not yet on this
# machine.  Idempotent and quiet when nothing is missing.  Needs root (or
# sudo).
set -euo pipefail

pkgs=(
	# build
	build-essential autoconf automake libtool pkg-config
	libyaml-dev libcurl4-openssl-dev libssh-dev libpam0g-dev libjson-c-dev libedit-dev libssl-dev nettle-dev zlib1g-dev
	# tests
	libcmocka-dev clang libclang-rt-14-dev valgrind
	openssh-server openssh-client tmux pamtester libpam-wrapper
	bash coreutils procps python3 git man-db
	# egress.sh: TLS registries on loopback and the clients that use them
	curl openssl python3-venv
	# transfer_rules.sh: the real rsync client and server
	rsync
)
# only the suite's: the Debian package is built and checked (dpkg-buildpackage,
# lintian), recordings played by asciinema, audit forwarded by rsyslog
if [ "${1:-}" = --tests ]; then
	pkgs+=(debhelper dpkg-dev fakeroot lintian asciinema rsyslog rsyslog-relp logrotate bash-completion)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# the MCP test's client (the official SDK, from npm) runs on node; a node
# from elsewhere (NodeSource's package has npm inside) is as good
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "agentgate: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
