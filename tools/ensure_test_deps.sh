#!/bin/sh
# Makes sure the system packages the tests need exist: Xvfb and Mesa (software OpenGL) for the GUI and
# off-screen rendering tests, Tesseract for the tests that read the puzzles' pictures back. Installs them through apt-get when running as root; otherwise says what to do.
set -eu
PKGS="xvfb xauth libgl1-mesa-dri libglx-mesa0 libegl1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-render-util0 libxcb-image0 tesseract-ocr"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing test dependencies:$missing"
  # Today's tests do not need a display yet, so a failed install warns instead of stopping the suite.
  if ! { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; }; then
    echo "warning: apt-get could not install:$missing" >&2
  fi
else
  echo "warning: missing system packages for the GUI tests:$missing" >&2
  echo "  install them with: sudo apt-get install$missing" >&2
fi
