# Writes R survey's bundled example data (the California API samples: apistrat, apiclus1,
# apiclus2) as CSV beside tests/fixtures/api/study.toml, for the R oracle test.
#
#   Rscript tests/r/api.R tests/fixtures/api
#
# Columns recite reads must be numeric: school type is coded 1 = E, 2 = M, 3 = H, and the
# Yes/No factors 1/0; dots in names become underscores. `one` is a single stratum for the
# cluster samples (recite's design declares strata and PSU).
suppressPackageStartupMessages(library(survey))
data(api)
out <- commandArgs(trailingOnly = TRUE)[1]
keep <- c("snum", "dnum", "stype", "api00", "api99", "growth", "sch.wide", "comp.imp", "awards",
          "meals", "ell", "mobility", "acs.k3", "enroll", "avg.ed", "pw")
for (name in c("apistrat", "apiclus1", "apiclus2")) {
  d <- get(name)[, keep]
  d$stype <- match(as.character(d$stype), c("E", "M", "H"))
  for (yn in c("sch.wide", "comp.imp", "awards")) d[[yn]] <- as.integer(d[[yn]] == "Yes")
  d$one <- 1L
  names(d) <- gsub(".", "_", names(d), fixed = TRUE)
  write.csv(d, file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "")
}
