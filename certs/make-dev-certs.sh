#!/usr/bin/env bash
# Makes the sandbox's development certificates: a CA, the sandbox's server certificate, a QWAC-shaped
# TPP client certificate and the broken variants the tests need. See certs/README.md.
#
# usage: certs/make-dev-certs.sh [--force] [target-dir]     (default target: certs/dev in the repository)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
force=false
target=""
for arg in "$@"; do
  case "$arg" in
    --force) force=true ;;
    -h | --help) sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "make-dev-certs: unknown option $arg" >&2; exit 2 ;;
    *)
      if [[ -n "$target" ]]; then echo "make-dev-certs: only one target directory, got '$target' and '$arg'" >&2; exit 2; fi
      target=$arg
      ;;
  esac
done
target=${target:-$repo_root/certs/dev}

# ca.pem is moved into place last, so its presence means a previous run finished.
files=(sandbox.key sandbox.pem tpp.key tpp.pem tpp-noroles.key tpp-noroles.pem tpp-ai.key tpp-ai.pem
  tpp-expired.key tpp-expired.pem tpp-rogue.key tpp-rogue.pem ca.key ca.pem)
if [[ -e "$target/ca.pem" && "$force" == false ]]; then
  missing=()
  for file in "${files[@]}"; do [[ -e "$target/$file" ]] || missing+=("$file"); done
  if ((${#missing[@]} > 0)); then
    echo "make-dev-certs: $target/ca.pem exists but ${missing[*]} missing; run with --force to recreate all" >&2
  fi
  exit 0
fi

mkdir -p "$target"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# openssl is chatty on stderr even when it succeeds: show what it said only when it fails.
ossl() {
  if ! openssl "$@" 2>"$work/openssl.log"; then
    echo "make-dev-certs: openssl $1 failed:" >&2
    cat "$work/openssl.log" >&2
    return 1
  fi
}

new_key() { # file
  ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
  chmod 600 "$1"
}

new_csr() { # key subject out
  ossl req -new -key "$1" -subj "$2" -out "$3"
}

# The extensions of a QWAC-shaped client certificate. The PSD2 statement (ETSI TS 119 495) is left out
# when no roles are given.
write_tpp_extensions() { # file role...
  local file=$1
  shift
  local psd2_line="" roles=""
  if (($# > 0)); then
    psd2_line="psd2 = SEQUENCE:qc_psd2"
    local i=0 role
    for role in "$@"; do
      i=$((i + 1))
      roles+="role$i = SEQUENCE:role_$role"$'\n'
    done
  fi
  cat >"$file" <<EOF
[tpp]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth, serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
1.3.6.1.5.5.7.1.3 = ASN1:SEQUENCE:qc_statements

[qc_statements]
compliance = SEQUENCE:qc_compliance
type = SEQUENCE:qc_type
$psd2_line

[qc_compliance]
statementId = OID:0.4.0.1862.1.1

[qc_type]
statementId = OID:0.4.0.1862.1.6
statementInfo = SEQUENCE:qc_type_web

[qc_type_web]
web = OID:0.4.0.1862.1.6.3

[qc_psd2]
statementId = OID:0.4.0.19495.2
statementInfo = SEQUENCE:psd2_statement

[psd2_statement]
rolesOfPSP = SEQUENCE:psd2_roles
nCAName = UTF8:Bank of Greece
nCAId = UTF8:GR-BOG

[psd2_roles]
$roles
[role_PSP_AS]
roleOfPspOid = OID:0.4.0.19495.1.1
roleOfPspName = UTF8:PSP_AS

[role_PSP_PI]
roleOfPspOid = OID:0.4.0.19495.1.2
roleOfPspName = UTF8:PSP_PI

[role_PSP_AI]
roleOfPspOid = OID:0.4.0.19495.1.3
roleOfPspName = UTF8:PSP_AI

[role_PSP_IC]
roleOfPspOid = OID:0.4.0.19495.1.4
roleOfPspName = UTF8:PSP_IC
EOF
}

make_ca() { # name common-name
  new_key "$work/$1.key"
  ossl req -x509 -new -key "$work/$1.key" -subj "/C=GR/O=Portico Sandbox/CN=$2" -days 3650 \
    -addext "basicConstraints=critical,CA:true" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$work/$1.pem"
}

sign() { # name ca-name days extensions-file section
  ossl x509 -req -in "$work/$1.csr" -CA "$work/$2.pem" -CAkey "$work/$2.key" \
    -CAserial "$work/$2.srl" -CAcreateserial -days "$3" -extfile "$4" -extensions "$5" -out "$work/$1.pem"
}

tpp_subject="/C=GR/O=Portico Sandbox TPP/CN=portico-sandbox-tpp/organizationIdentifier=PSDGR-BOG-123456"
all_roles=(PSP_AI PSP_PI PSP_IC)

make_ca ca "Portico Sandbox CA"
make_ca rogue "Rogue CA"

cat >"$work/server.cnf" <<EOF
[server]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:sandbox, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
new_key "$work/sandbox.key"
new_csr "$work/sandbox.key" "/C=GR/O=Portico Sandbox/CN=localhost" "$work/sandbox.csr"
sign sandbox ca 730 "$work/server.cnf" server

write_tpp_extensions "$work/tpp.cnf" "${all_roles[@]}"
write_tpp_extensions "$work/tpp-noroles.cnf"
write_tpp_extensions "$work/tpp-ai.cnf" PSP_AI
for name in tpp tpp-noroles tpp-ai tpp-expired tpp-rogue; do
  new_key "$work/$name.key"
  new_csr "$work/$name.key" "$tpp_subject" "$work/$name.csr"
done
sign tpp ca 730 "$work/tpp.cnf" tpp
sign tpp-noroles ca 730 "$work/tpp-noroles.cnf" tpp
sign tpp-ai ca 730 "$work/tpp-ai.cnf" tpp
sign tpp-rogue rogue 730 "$work/tpp.cnf" tpp

# openssl 3.0's x509 command cannot backdate (-not_before/-not_after arrived in 3.4), but `openssl ca`
# takes explicit dates; it needs a CA database, kept in the temporary directory.
mkdir "$work/issued"
: >"$work/index.txt"
cat >"$work/expired-ca.cnf" <<EOF
[ca]
default_ca = throwaway

[throwaway]
database = $work/index.txt
new_certs_dir = $work/issued
serial = $work/expired.srl
default_md = sha256
unique_subject = no
policy = any_subject

[any_subject]
countryName = optional
organizationName = optional
commonName = supplied
organizationIdentifier = optional
EOF
ossl ca -batch -notext -config "$work/expired-ca.cnf" -cert "$work/ca.pem" -keyfile "$work/ca.key" \
  -rand_serial -preserveDN -startdate 20230101000000Z -enddate 20240101000000Z \
  -extfile "$work/tpp.cnf" -extensions tpp -in "$work/tpp-expired.csr" -out "$work/tpp-expired.pem"

for file in "${files[@]}"; do
  mv -f "$work/$file" "$target/$file"
  echo "created $target/$file"
done
