#!/usr/bin/env bash
# Preflight for deploy/k8s, deploy/k8s/array and deploy/k8s/array/merge: before anything is applied, names in one
# line each the edit a first apply needs and lacks, and exits 2 (0 when there is none):
#   bash deploy/k8s/preflight.sh deploy/k8s && kubectl apply -k deploy/k8s
# - the panta image: still `panta`, a name in no registry the nodes can pull from (kustomization.yaml images);
# - the Redis password: the public placeholder of redis-secret.yaml, or shorter than 16 characters (Redis's own
#   preflight init container refuses it too, but only once applied);
# - each ReadWriteMany claim: no storageClassName where the cluster's default class is block storage (or there is
#   no default, or no cluster to ask), a class the cluster does not have, or one whose provisioner is block
#   storage, which cannot be ReadWriteMany: the claim would stay Pending and every pod that mounts it with it.
# It renders the kustomization with `kubectl kustomize` and asks the cluster of kubectl's current context for its
# storage classes (KUBECTL names another kubectl command, e.g. "kubectl --context gpu").
set -uo pipefail

dir="${1:-deploy/k8s}"
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a kubectl <<< "${KUBECTL:-kubectl}"
if ! rendered="$("${kubectl[@]}" kustomize "$dir" 2>&1)"; then
  printf 'preflight: kubectl kustomize %s failed: %s\n' "$dir" "$(printf '%s' "$rendered" | head -n 1)" >&2
  exit 2
fi
bad=0
refuse() {
  echo "$*" >&2
  bad=1
}
# The file under deploy/k8s that declares object NAME of KIND (for the messages).
source_of() {
  local f
  f="$(grep -rlE --include='*.yaml' "^kind: $1\$" "$here" | xargs grep -lE "^  name: $2\$" 2>/dev/null | head -n 1)"
  printf '%s' "deploy/k8s/${f#"$here"/}"
}

# ---- the panta image ----------------------------------------------------------------------------------------
while read -r image; do
  [[ $image == */* ]] && continue
  refuse "$dir/kustomization.yaml: images: panta's newName is \"${image%%:*}\", in no registry the nodes can pull from: push the image (docker build -f deploy/Dockerfile -t REGISTRY/panta:TAG .) and set newName to REGISTRY/panta"
done < <(printf '%s\n' "$rendered" | sed -nE 's/^ *(- )?image: *"?([^" ]+)"?$/\2/p' | grep -E '(^|/)panta(:|@|$)' | sort -u)

# ---- one line per object of interest: kind, name, then its fields (rendered YAML: sorted keys, 2 spaces) -------
objects="$(printf '%s\n---\n' "$rendered" | awk '
  function flush() {
    if (kind == "PersistentVolumeClaim") print kind "\t" name "\t" rwx "\t" (has_sc ? sc : "-")
    else if (kind == "Secret" && name == "panta-redis") print kind "\t" name "\t" password
    kind = ""; name = ""; rwx = 0; has_sc = 0; sc = ""; password = ""; section = ""
  }
  /^---$/ { flush(); next }
  /^[a-zA-Z]/ { section = $1 }
  /^kind: / { kind = $2 }
  section == "metadata:" && /^  name: / { name = $2 }
  /^  - ReadWriteMany$/ { rwx = 1 }
  /^  storageClassName: / { has_sc = 1; sc = $2; gsub(/"/, "", sc) }
  section == "stringData:" && /^  password: / { password = substr($0, 13); gsub(/^"|"$/, "", password) }
  section == "data:" && /^  password: / { cmd = "printf %s " $2 " | base64 -d"; cmd | getline password; close(cmd) }
')"

# ---- the Redis password ---------------------------------------------------------------------------------------
while IFS=$'\t' read -r kind name password; do
  [[ $kind == Secret ]] || continue
  file="$(source_of Secret "$name")"
  if [[ $password == change-me* ]]; then
    refuse "$file: password is the public placeholder: set your own (openssl rand -hex 32)"
  elif ((${#password} < 16)); then
    refuse "$file: password is shorter than 16 characters: set your own (openssl rand -hex 32)"
  fi
done <<< "$objects"

# ---- ReadWriteMany claims and the cluster's storage classes -----------------------------------------------
# Provisioners of block storage (a disk attached to one node at a time): they cannot give ReadWriteMany.
block='^(ebs\.csi\.aws\.com|kubernetes\.io/aws-ebs|pd\.csi\.storage\.gke\.io|kubernetes\.io/gce-pd|disk\.csi\.azure\.com|kubernetes\.io/azure-disk|cinder\.csi\.openstack\.org|kubernetes\.io/cinder|rancher\.io/local-path|kubernetes\.io/no-provisioner|openebs\.io/local|local\.csi\.openebs\.io|topolvm\.io|dobs\.csi\.digitalocean\.com|csi\.hetzner\.cloud|linodebs\.csi\.linode\.com|diskplugin\.csi\.alibabacloud\.com|block\.csi\.ibm\.com|blockvolume\.csi\.oraclecloud\.com)$'
classes="" reachable=""
if classes="$("${kubectl[@]}" get storageclass -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.provisioner}{"\t"}{.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}{"\n"}{end}' 2>/dev/null)"; then
  reachable=1
fi
while IFS=$'\t' read -r kind name rwx sc; do
  [[ $kind == PersistentVolumeClaim && $rwx == 1 ]] || continue
  file="$(source_of PersistentVolumeClaim "$name")"
  fix="set storageClassName to a class that provides ReadWriteMany (NFS-, CephFS- or cloud-file-backed)"
  if [[ -z $reachable ]]; then
    [[ $sc == - ]] && refuse "$file: $name: no storageClassName, and no cluster answers to say whether its default class can be ReadWriteMany: $fix"
    continue
  fi
  if [[ $sc == - ]]; then
    sc="$(awk -F'\t' '$3 == "true" { print $1; exit }' <<< "$classes")"
    if [[ -z $sc ]]; then
      refuse "$file: $name: no storageClassName and the cluster has no default class: $fix"
      continue
    fi
    what="the cluster's default class \"$sc\""
  else
    what="storage class \"$sc\""
  fi
  provisioner="$(awk -F'\t' -v c="$sc" '$1 == c { print $2; exit }' <<< "$classes")"
  if [[ -z $provisioner ]]; then
    refuse "$file: $name: the cluster has no $what: $fix"
  elif [[ $provisioner =~ $block ]]; then
    refuse "$file: $name: $what is block storage ($provisioner), which cannot be ReadWriteMany: $fix"
  fi
done <<< "$objects"

((bad == 0)) || exit 2
echo "preflight: $dir is ready to apply (kubectl apply -k $dir)" >&2
