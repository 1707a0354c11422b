#!/usr/bin/env bash
# Debian packages ScanRAG's OCR fallback and browser tests use. Installs only what is missing.
set -euo pipefail
need=()
command -v tesseract >/dev/null || need+=(tesseract-ocr tesseract-ocr-eng)
command -v chromium >/dev/null || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
