# Writes replicate-weight versions of R survey's API samples, made by R's own as.svrepdesign, as
# CSV beside tests/fixtures/api/study.toml, for the replicate-weight oracle test.
#
#   Rscript tests/r/replicates.R tests/fixtures/api
#
# Each replicate column holds the replicate's full weight (pw × its factor: R's "analysis"
# weights), as svrepdesign(combined.weights = TRUE) reads it. Columns recite reads are coded as tests/r/api.R
# codes them. The replicate sets:
#   apistrat_rep.csv  jkn_*  JKn over the stratified sample (200 replicates)
#                     brr_*  BRR over pseudo-strata pairing schools within school type (104)
#                     fay_*  Fay's BRR, rho = 0.3, over the same pairs (104)
#   apiclus1_rep.csv  jk1_*  JK1 over the 15 sampled districts
#                     boot_* bootstrap (Rao–Wu), 50 replicates, set.seed(11)
# Each set's declaration for study.toml (method, scale, rscales, rho, df as R has them) is printed.
suppressPackageStartupMessages(library(survey))
data(api)
out <- commandArgs(trailingOnly = TRUE)[1]
keep <- c("snum", "dnum", "stype", "api00", "api99", "sch.wide", "awards", "enroll", "meals", "pw")
code <- function(d) {
  d$stype <- match(as.character(d$stype), c("E", "M", "H"))
  for (yn in c("sch.wide", "awards")) d[[yn]] <- as.integer(d[[yn]] == "Yes")
  names(d) <- gsub(".", "_", names(d), fixed = TRUE)
  d
}
# The replicate weights of a design as columns PREFIX_1…, and its declaration for study.toml
# (printed): R's method, scale, rscales, rho and degrees of freedom.
reps <- function(design, prefix) {
  r <- weights(design, "analysis")
  colnames(r) <- paste0(prefix, "_", seq_len(ncol(r)))
  g <- function(v) format(v, digits = 17)
  cat(sprintf('\n[tables.replicates]  # %s\ncolumns = "%s_*"\nmethod = "%s"\nscale = %s\ndf = %d\n',
              prefix, prefix, design$type, g(design$scale), degf(design)))
  if (design$type == "Fay") cat(sprintf("rho = %s\n", g(design$rho)))
  if (length(unique(design$rscales)) > 1) {
    cat("rscales = [", paste(format(design$rscales, digits = 15), collapse = ", "), "]\n")
  }
  # Nine significant digits: R and recite read the same file, so agreement needs no more.
  as.data.frame(signif(r, 9))
}

# The stratified sample; pairs of schools within school type as pseudo-strata for (Fay's) BRR.
s <- apistrat[order(apistrat$stype, apistrat$snum), keep]
s$pair <- paste(s$stype, (ave(seq_along(s$snum), s$stype, FUN = seq_along) + 1) %/% 2)
dstrat <- svydesign(ids = ~1, strata = ~stype, weights = ~pw, data = s)
dpairs <- svydesign(ids = ~snum, strata = ~pair, weights = ~pw, data = s)
strat <- cbind(code(s[, keep]),
               reps(as.svrepdesign(dstrat, type = "JKn"), "jkn"),
               reps(as.svrepdesign(dpairs, type = "BRR"), "brr"),
               reps(as.svrepdesign(dpairs, type = "Fay", fay.rho = 0.3), "fay"))
write.csv(strat, file.path(out, "apistrat_rep.csv"), row.names = FALSE, na = "")

# The one-stage cluster sample of districts.
c1 <- apiclus1[, keep]
dclus1 <- svydesign(ids = ~dnum, weights = ~pw, data = c1)
set.seed(11)
clus <- cbind(code(c1),
              reps(as.svrepdesign(dclus1, type = "JK1"), "jk1"),
              reps(as.svrepdesign(dclus1, type = "bootstrap", replicates = 50), "boot"))
write.csv(clus, file.path(out, "apiclus1_rep.csv"), row.names = FALSE, na = "")
