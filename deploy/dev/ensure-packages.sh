#!/usr/bin/env bash
# Installs the Debian packages the tests call out to, when missing:
#   xmllint (libxml2-utils)           XML schema checks: SEPA pain.001, CII invoices
#   java + Saxon-HE (default-jre-headless, libsaxonhe-java)
#                                     the EN 16931 / XRechnung schematron rules
#   pdfdetach (poppler-utils)         the validator unpacks invoice PDFs with it
# Nothing is downloaded at run time of the platform; this is for `make test`.
set -euo pipefail
missing=()
command -v xmllint >/dev/null || missing+=(libxml2-utils)
command -v java >/dev/null || missing+=(default-jre-headless)
[[ -f /usr/share/java/Saxon-HE.jar ]] || missing+=(libsaxonhe-java)
command -v pdfdetach >/dev/null || missing+=(poppler-utils)
((${#missing[@]} == 0)) && exit 0
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "missing packages: ${missing[*]} (install them: apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
