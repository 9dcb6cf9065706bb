#!/usr/bin/env bash
# Comments in src/ and backends/ say why (the bound, the invariant, the reason), never when or
# how fast: no commit hash, no date, no timing or rate.  Measurements live in
# docs/benchmarks.md and docs/history/.  This scans the comment text of every C++/CUDA source
# (// and /* */ comments, .in templates included) and every CMake file (# comments) under
# src/ and backends/ and prints file:line: text for each comment that holds
#   - a commit hash: a word of 7 to 40 lowercase hex digits with at least one digit and one
#     letter (0x... literals are one word with their prefix, so they never match);
#   - an ISO date: 20YY-MM-DD;
#   - a timing or rate: a number followed by ns, us, µs, ms, s, sec, seconds, minutes, or by
#     FLOP/s, OP/s, B/s (any of T, G, M, K, P before them, TFLOPS and TOPS too);
#     A bare "s" counts only where no operator precedes the number or follows the s ("took
#     3 s", not the index arithmetic "j + 2 s", "16 s + b" or "2^(-8s)");
#   - a speedup: "1.60x", "2x faster", "0.9x native", "8% faster" and the like (a number and x
#     followed by faster, slower, native, speedup, DGEMM, ZGEMM, SGEMM or cuBLAS; any number
#     with a decimal point followed by x; a percentage followed by faster, slower, quicker,
#     speedup or gain, also across the end of a comment line).
# Files listed in cmake/check_comments.allow (paths relative to the repository root, # starts a
# comment) are skipped.  Exits 1 if anything is found, 0 otherwise.
#
#   cmake/check_comments.sh [REPOSITORY_ROOT]     (default: the directory above this script)
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
allow="$root/cmake/check_comments.allow"
cd "$root"

files=()
while IFS= read -r -d '' f; do
  files+=("${f#./}")
done < <(find ./src ./backends -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \
  -o -name '*.cu' -o -name '*.cuh' -o -name '*.in' -o -name 'CMakeLists.txt' \
  -o -name '*.cmake' -o -name '*.map' \) -print0 | sort -z)

ALLOW_FILE="$allow" perl -CSD -Mutf8 -e '
use strict; use warnings;
my %allowed;
if (-f $ENV{ALLOW_FILE}) {
  open(my $a, "<", $ENV{ALLOW_FILE}) or die "$ENV{ALLOW_FILE}: $!";
  while (<$a>) { s/#.*//; s/^\s+|\s+$//g; $allowed{$_} = 1 if length; }
}
my $hash = qr/(?<![\w.\/-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w\/-])/;
my $date = qr/\b20\d\d-\d\d-\d\d\b/;
my $num  = qr/(?<![\w.^])\d+(?:\.\d+)?/;
my $unit = qr/(?:ns|us|µs|ms|sec|seconds?|minutes?|[TGMKP]?(?:FLOP|OP|B)\/s|[TGP](?:FLOPS|OPS))/;
my $time = qr/(?:$num\s?$unit|(?<![-+*\/=^(])(?<![-+*\/=^(]\s)$num\s?s(?!\s?[-+*\/=^]))(?![\w\/])/;
my $ratio = qr/(?:$num\s?x\s+(?:faster|slower|native|speed-?up|DGEMM|ZGEMM|SGEMM|cuBLAS)\b|(?<![\w.^])\d*\.\d+x\b)/;
my $percent = qr/\d(?:\.\d+)?\s?%\s+(?:faster|slower|quicker|speed-?ups?|gains?)\b/;
my $found = 0;
for my $f (@ARGV) {
  next if $allowed{$f};
  open(my $fh, "<", $f) or die "$f: $!";
  my $cmake = ($f =~ /(?:CMakeLists\.txt|\.cmake)$/);
  my $inblock = 0;
  my $prev = "";
  while (my $line = <$fh>) {
    chomp $line;
    my $text = "";
    if ($cmake) {
      (my $l = $line) =~ s/"(?:[^"\\]|\\.)*"/""/g;    # strings are code
      $text = $1 if $l =~ /#(.*)$/;
    } else {
      my $rest = $line;
      while (length $rest) {
        if ($inblock) {
          if ($rest =~ /^(.*?)\*\/(.*)$/) { $text .= " $1"; $rest = $2; $inblock = 0; }
          else { $text .= " $rest"; $rest = ""; }
          next;
        }
        $rest =~ s/^(?:[^"\x27\/]|\/(?![\/*]))+//;       # code up to a string or comment
        last unless length $rest;
        if ($rest =~ s/^"(?:[^"\\]|\\.)*"// || $rest =~ s/^\x27(?:[^\x27\\]|\\.)*\x27//) { next; }
        if ($rest =~ /^\/\/(.*)$/) { $text .= " $1"; last; }
        if ($rest =~ s/^\/\*//) { $inblock = 1; next; }
        $rest = substr($rest, 1);                        # a lone quote (digit separator)
      }
    }
    $text =~ s/^[\s\/*!<]+//;                             # doc-comment markers
    if ($text !~ /\S/) { $prev = ""; next; }
    my $joined = "$prev $text";
    my @why;
    push @why, "commit hash" if $text =~ $hash;
    push @why, "date" if $text =~ $date;
    push @why, "timing or rate" if $text =~ $time;
    push @why, "speedup" if $text =~ $ratio || $text =~ $percent
      || ($joined =~ $percent && $prev !~ $percent);
    $prev = $text;
    if (@why) {
      print "$f:$.: [", join(", ", @why), "] $text\n";
      $found = 1;
    }
  }
  close $fh;
}
if ($found) {
  print STDERR "check_comments: comments in src/ and backends/ must say why, not when or how fast:\n",
    "  move measurements to docs/benchmarks.md or docs/history/ and cite the section instead.\n";
  exit 1;
}
exit 0;
' "${files[@]}"
