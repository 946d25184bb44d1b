#!/usr/bin/env bash
# check-citations.sh - every citation in the tree resolves (docs/protocol.md,
# "Citing this page"). Usage: check-citations.sh [TOP]; TOP defaults to the
# repository this script lives in, and must be a git work tree: the files
# checked are the tracked ones.
#
# In every tracked text file it finds
#   - section citations: the section sign followed by N or N.M..., with an
#     optional document name in front ("architecture.md", "docs/shm.md"),
#     and a document name followed by "section N" in prose. A bare one names a heading of
#     docs/protocol.md; a named one a heading of that document, which must
#     be tracked. Citations in a list ("X, Y") share the first one's
#     document. RFC sections ("RFC 8985" before the sign) are not resolved.
#   - design choices: a D followed by a number, which must be a row of one of
#     protocol.md's tables headed "| D | Choice | Why | Status |".
# Code (every tracked file that is not markdown) may further not cite the
# project's protocol notes kept outside the repository (its brief), a paper,
# or any markdown file outside the tree; a doc may name those notes and the
# papers as sources, but may not cite sections of the notes.
#
# It fails, printing file:line, the kind and the citation, on each one that
# does not resolve, and also when it has nothing to check: no git tree, no
# docs/protocol.md, no numbered heading or no design choice in it, a
# duplicate or missing D-number in the list, or no citation in any code file.
#
# scripts/check-citations.pending may list findings in files that another
# change is rewriting, one "path<TAB>kind: citation" per line: those are
# reported as pending, not failed, and an entry that matches nothing fails
# (so the list only shrinks).
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
if ! files=$(git -C "$top" ls-files 2>/dev/null) || [ -z "$files" ]; then
	echo "citations: $top is not a git work tree with tracked files"
	exit 1
fi
cd "$top" || exit 1
printf '%s\n' "$files" | exec perl -e '
use strict;
use warnings;

my $S = "\xC2\xA7";                        # the section sign, UTF-8
my $NUM = qr/\d+(?:\.\d+)*/;
my $PROTO = "docs/protocol.md";
my $PENDING = "scripts/check-citations.pending";
my $CITES_BRIEF = "cites the br" . "ief";        # spelt apart: this file cites nothing
my (%tracked, @files);
while (my $f = <STDIN>) {
	chomp $f;
	next if $f eq "";
	$tracked{$f} = 1;
	push @files, $f;
}

my (@errors, %heads);

sub slurp {
	my ($p) = @_;
	open(my $fh, "<", $p) or return undef;
	binmode $fh;
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

# The numbered headings of a markdown file, outside fenced code blocks.
sub headings {
	my ($p) = @_;
	return $heads{$p} if exists $heads{$p};
	my %h;
	my $text = slurp($p);
	if (defined $text) {
		my $fence = 0;
		for my $l (split /\n/, $text) {
			if ($l =~ /^\s*```/) { $fence = !$fence; next; }
			next if $fence;
			$h{$1} = 1 if $l =~ /^#{1,6}\s+(?:$S\s*)?($NUM)\.?(?=\s|$)/;
		}
	}
	$heads{$p} = \%h;
	return \%h;
}

# ---- docs/protocol.md: its headings and its design-choice list ----
unless ($tracked{$PROTO} && -f $PROTO) {
	print "citations: $PROTO is missing\n";
	exit 1;
}
my $proto_heads = headings($PROTO);
unless (%$proto_heads) {
	print "citations: no numbered heading in $PROTO\n";
	exit 1;
}
my %dset;
{
	my $in = 0;
	my $n = 0;
	for my $l (split /\n/, slurp($PROTO)) {
		$n++;
		if ($l =~ /^\|\s*D\s*\|\s*Choice\s*\|/) { $in = 1; next; }
		if ($in && $l !~ /^\|/) { $in = 0; next; }
		next unless $in && $l =~ /^\|\s*D(\d+)\s*\|/;
		push @errors, "$PROTO:$n: design choice defined twice: D$1" if $dset{$1}++;
	}
	unless (%dset) {
		print "citations: no design-choice table (| D | Choice | Why | Status |) in $PROTO\n";
		exit 1;
	}
	my ($max) = sort { $b <=> $a } keys %dset;
	for my $d (1 .. $max) {
		push @errors, "$PROTO: design-choice list has no D$d" unless $dset{$d};
	}
}

# A document named in a citation: the tracked path, or undef.
sub doc_path {
	my ($name) = @_;
	$name =~ s/^\.\///;
	return undef if $name =~ m{^(?:\.\./|/)};
	return $tracked{$name} ? $name : undef if $name =~ m{/};
	return "docs/$name" if $tracked{"docs/$name"};
	return $name if $tracked{$name};
	return undef;
}

# ---- the pending list ----
my %pending;
if ($tracked{$PENDING} && -f $PENDING) {
	my $n = 0;
	for my $l (split /\n/, slurp($PENDING)) {
		$n++;
		next if $l =~ /^\s*(#|$)/;
		if ($l =~ /^([^\t]+)\t(.+?)\s*$/) {
			$pending{"$1\t$2"} = { line => $n, used => 0 };
		} else {
			push @errors, "$PENDING:$n: not \"path<TAB>kind: citation\"";
		}
	}
}

my ($n_files, $n_code, $n_sec, $n_d, $n_in_code, $n_pending) = (0, 0, 0, 0, 0, 0);

sub finding {
	my ($path, $line, $what) = @_;
	my $p = $pending{"$path\t$what"};
	if ($p) {
		$p->{used} = 1;
		$n_pending++;
		print "pending: $path:$line: $what\n";
		return;
	}
	push @errors, "$path:$line: $what";
}

# One section citation, $num, after $prefix (the text since the previous
# citation on the line, or since the line start).
sub section {
	my ($path, $line, $is_doc, $num, $prefix, $ctx) = @_;
	# a list ("X, Y and Z") keeps the context of its first citation
	unless (defined $ctx && $prefix =~ /^[\s,;\/&()]*(?:and\s*|\xE2\x80\x93\s*)?$/) {
		if ($prefix =~ /\bRFC\s*\d+\s*$/) {
			$ctx = { kind => "rfc" };
		} elsif ($prefix =~ /(?:mrc-protocol-bri(?:ef)|\bbrief(?:\x27s)?)\s*$/i) {
			$ctx = { kind => "brief" };
		} elsif ($prefix =~ /\b(?:paper(?:\x27s)?|arXiv:\S+)\s*$/i) {
			$ctx = { kind => "paper" };
		} elsif ($prefix =~ /([\w.\/-]*\w\.md)`?\s*,?\s*$/) {
			$ctx = { kind => "doc", name => $1 };
		} else {
			$ctx = { kind => "doc", name => undef };
		}
	}
	my $k = $ctx->{kind};
	if ($k eq "rfc") {
	} elsif ($k eq "brief") {
		finding($path, $line, "$CITES_BRIEF: brief $S$num");
	} elsif ($k eq "paper") {
		finding($path, $line, "cites a document outside the tree: paper $S$num") unless $is_doc;
	} else {
		my $name = $ctx->{name};
		my $doc = defined $name ? doc_path($name) : $PROTO;
		if (!defined $doc) {
			finding($path, $line, "cites a document outside the tree: $name $S$num");
		} elsif (!headings($doc)->{$num}) {
			my $shown = defined $name ? "$name $S$num" : "$S$num";
			finding($path, $line, "no such section in $doc: $shown");
		}
	}
	return $ctx;
}

for my $path (@files) {
	next if $path eq $PENDING;
	next unless -f $path;
	my $text = slurp($path);
	next unless defined $text;
	next if index(substr($text, 0, 8192), "\0") >= 0; # binary
	$n_files++;
	my $is_doc = $path =~ /\.md$/;
	$n_code++ unless $is_doc;
	my $n = 0;
	for my $l (split /\n/, $text) {
		$n++;
		my ($s0, $d0) = ($n_sec, $n_d);
		my ($ctx, $from) = (undef, 0);
		while ($l =~ /$S\s?($NUM)/g) {
			my ($num, $end) = ($1, pos($l));
			my $start = $-[0];
			$n_sec++;
			$ctx = section($path, $n, $is_doc, $num, substr($l, $from, $start - $from), $ctx);
			$from = $end;
		}
		while ($l =~ /([\w.\/-]*\w\.md)`?,?\s+sections?\s+($NUM)/g) {
			$n_sec++;
			section($path, $n, $is_doc, $2, "$1 ", undef);
		}
		while ($l =~ /(?<![\w.])D(\d+)(?!\w)/g) {
			$n_d++;
			finding($path, $n, "unknown design choice: D$1") unless $dset{$1};
		}
		$n_in_code += $n_sec - $s0 + $n_d - $d0 unless $is_doc;
		next if $is_doc;
		while ($l =~ /(mrc-protocol-bri(?:ef)[\w.]*|\bthe\sbrief(?:\x27s)?\b|\bbrief\x27s\b|[(]brief\b|\bprotocol\sbrief\b|\bbrief\s*$)(?!\s*$S)/gi) {
			finding($path, $n, "$CITES_BRIEF: $1");
		}
		while ($l =~ /((?:\.\.?\/|\/)?[\w.\/-]*\w\.md)\b/g) {
			my $name = $1;
			finding($path, $n, "cites a document outside the tree: $name") unless doc_path($name);
		}
	}
}

for my $key (sort keys %pending) {
	next if $pending{$key}->{used};
	my ($p, $w) = split /\t/, $key, 2;
	push @errors, "$PENDING:$pending{$key}->{line}: stale entry, matches nothing: $p: $w";
}
if ($n_code == 0 || $n_in_code == 0) {
	push @errors, "nothing checked: $n_code code files, $n_in_code citations in them";
}
my $summary = sprintf "%d files (%d code), %d section and %d design-choice citations, %d of them in code",
	$n_files, $n_code, $n_sec, $n_d, $n_in_code;
if (@errors) {
	print "citations: $_\n" for @errors;
	printf "citations: %d failed (%s)\n", scalar(@errors), $summary;
	exit 1;
}
printf "citations: ok (%s%s)\n", $summary, $n_pending ? "; $n_pending pending" : "";
exit 0;
'
