#!/usr/bin/env bash
# Installs the Debian packages the tests call out to, when missing:
#   xmllint (libxml2-utils)           XML schema checks: SEPA pain.001, CII invoices
#   java + Saxon-HE (default-jre-headless, libsaxonhe-java)
#                                     the EN 16931 / XRechnung schematron rules
#   pdfdetach (poppler-utils)         the validator unpacks invoice PDFs with it
#   pdftotext, pdftoppm (poppler-utils), tesseract with German and English
#   (tesseract-ocr, tesseract-ocr-deu, tesseract-ocr-eng)
#                                     payables/extract reads invoice PDFs and scans
# Nothing is downloaded at run time of the platform; `make test` runs this,
# and `make run` runs it with `runtime` for the extraction tools only (the
# container image installs those itself).
set -euo pipefail
missing=()
if [[ ${1:-} != runtime ]]; then
  command -v xmllint >/dev/null || missing+=(libxml2-utils)
  command -v java >/dev/null || missing+=(default-jre-headless)
  [[ -f /usr/share/java/Saxon-HE.jar ]] || missing+=(libsaxonhe-java)
fi
{ command -v pdfdetach && command -v pdftotext && command -v pdftoppm; } >/dev/null || missing+=(poppler-utils)
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
langs=$(tesseract --list-langs 2>/dev/null || true)
grep -qx deu <<<"$langs" || missing+=(tesseract-ocr-deu)
grep -qx eng <<<"$langs" || missing+=(tesseract-ocr-eng)
((${#missing[@]} == 0)) && exit 0
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "missing packages: ${missing[*]} (install them: apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
