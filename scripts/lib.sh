# Sourced by the test scripts: step headings, and installing the Debian
# packages a fresh machine lacks (as root, or through sudo).

step() { printf '\n== %s\n' "$*"; }

# apt_install PACKAGE...: installs them quietly; nothing when none given.
apt_install() {
  [ $# -gt 0 ] || return 0
  step "installing $*"
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
