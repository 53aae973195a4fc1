# R's survey package as the oracle for recite's statistics (run by tests/statistics.rs).
#
#   Rscript tests/r/oracle.R CASES.tsv OUT.tsv
#
# CASES.tsv has one row per measure: the data file (CSV), the design columns (empty when weights
# only), the weight column (`.one` for unweighted), the period and base filters as the catalog
# writes them (SQL, translated here), the cited column and its missing codes, and the measure:
#   share  a            Σw·1[a] / Σw                 svymean, svyciprop(logit, beta)
#   mean                Σw·x / Σw                    svymean, confint(df = degf)
#   ratio  a b          Σw·1[a] / Σw·1[b]            svyratio; interval svyciprop on subset(b)
#   difference a b s    s·(share a − share b)        svycontrast
# Predicates are over x, the cited column ("x >= 2 and x <= 8", "x in [4, 5]").
# A design is the table's design over every row, the base a domain of it (subset); weights only,
# the base rows are the whole sample (svydesign(ids = ~1) on them), as docs/semantics.md says.
# Replicate weights (reps: the columns; rtype, rscale, rscales, rho, mse as svrepdesign takes
# them; rscale and rscales empty where the catalog leaves them to svrepdesign's defaults) make an
# svrepdesign over every row, the base again a domain (subset(), whose degf() is the rank of its
# replicate weights − 1). Intervals are computed where the `intervals` column is 1.
# Wilson has no survey method: it is computed here from its formula on the domain's Kish base.
suppressPackageStartupMessages(library(survey))
options(survey.lonely.psu = "certainty", digits = 17)

args <- commandArgs(trailingOnly = TRUE)
cases <- read.delim(args[1], colClasses = "character", na.strings = character(0), quote = "")

sql2r <- function(s) {
  s <- gsub('"([A-Za-z_][A-Za-z0-9_]*)"', "\\1", s, perl = TRUE)  # quoted identifiers
  s <- gsub("([A-Za-z_][A-Za-z0-9_]*)\\s+BETWEEN\\s+(-?[0-9.]+)\\s+AND\\s+(-?[0-9.]+)",
            "(\\1 >= \\2 & \\1 <= \\3)", s, ignore.case = TRUE, perl = TRUE)
  s <- gsub("\\bAND\\b", "&", s, ignore.case = TRUE, perl = TRUE)
  s <- gsub("\\bOR\\b", "|", s, ignore.case = TRUE, perl = TRUE)
  s <- gsub("\\bNOT\\b", "!", s, ignore.case = TRUE, perl = TRUE)
  s <- gsub("<>", "!=", s, fixed = TRUE)
  s <- gsub("(?<![<>!=])=(?!=)", "==", s, perl = TRUE)
  s <- gsub("\\bin\\s*\\[([^]]*)\\]", "%in% c(\\1)", s, perl = TRUE)
  s
}
# A predicate over x as a 0/1 vector.
ind <- function(pred, x) as.numeric(eval(parse(text = sql2r(pred)), list(x = x)))

data_cache <- list()
load_data <- function(path) {
  if (is.null(data_cache[[path]])) {
    d <- read.csv(path)
    d$.one <- 1
    data_cache[[path]] <<- d
  }
  data_cache[[path]]
}
# The table's design over every row, built once per table and weight (a case adds its own
# indicator columns to a copy, then takes its domain with subset()).
design_cache <- list()
full_design <- function(first, d) {
  key <- paste(first$data, first$strata, first$psu, first$weight)
  if (is.null(design_cache[[key]])) {
    design_cache[[key]] <<- svydesign(
      ids = as.formula(paste0("~", first$psu)), strata = as.formula(paste0("~", first$strata)),
      weights = as.formula(paste0("~", first$weight)), nest = TRUE, data = d)
  }
  design_cache[[key]]
}

rep_cache <- list()
rep_design <- function(first, d) {
  key <- paste(first$data, first$reps, first$weight, first$rtype, first$rscale, first$rscales, first$rho, first$mse)
  if (is.null(rep_cache[[key]])) {
    cols <- strsplit(first$reps, ",")[[1]]
    rep_cache[[key]] <<- svrepdesign(
      data = d, repweights = d[, cols], weights = as.formula(paste0("~", first$weight)),
      type = first$rtype, combined.weights = TRUE,
      scale = if (nzchar(first$rscale)) as.numeric(first$rscale) else NULL,
      rscales = if (nzchar(first$rscales)) as.numeric(strsplit(first$rscales, ",")[[1]]) else NULL,
      rho = if (nzchar(first$rho)) as.numeric(first$rho) else NULL, mse = first$mse == "true")
  }
  rep_cache[[key]]
}

num <- function(v) if (is.null(v) || length(v) == 0 || !is.finite(v)) "NA" else sprintf("%.17g", v)
header <- c("case", "measure", "n", "weighted", "effective", "value", "se", "df", "df_full",
            "logit_lo", "logit_hi", "beta_lo", "beta_hi", "wilson_lo", "wilson_hi", "deff", "degenerate")

# Whether a proportion's replicate estimates reach 0 or 1 on a replicate design: svyciprop's
# logit interval then refits a logistic model that cannot converge on that replicate, and its
# interval is wherever the fit stopped (near (0, 1)); recite falls back to the linearised one.
degenerate <- function(fa, design) {
  if (!inherits(design, "svyrep.design")) return(FALSE)
  r <- svymean(fa, design, return.replicates = TRUE)$replicates
  any(r <= 0 | r >= 1)
}

kish <- function(w) sum(w)^2 / sum(w^2)
wilson <- function(p, neff, df) {
  q <- qt(0.975, df); z2 <- q * q
  denom <- 1 + z2 / neff
  centre <- (p + z2 / (2 * neff)) / denom
  half <- q / denom * sqrt(p * (1 - p) / neff + z2 / (4 * neff * neff))
  c(max(0, centre - half), min(1, centre + half))
}
ci_of <- function(r) as.numeric(attr(r, "ci"))

# One case (a citation: table, weight, period, base, column) and its measures, as output lines.
run_case <- function(rows) {
  first <- rows[1, ]
  d <- load_data(first$data)
  x <- d[[first$column]]
  w <- d[[first$weight]]
  domain <- !is.na(x) & !is.na(w) & w > 0
  if (nzchar(first$missing)) domain <- domain & !(x %in% as.numeric(strsplit(first$missing, ",")[[1]]))
  for (f in c(first$period, first$base)) {
    if (nzchar(f)) {
      keep <- eval(parse(text = sql2r(f)), d)
      domain <- domain & !is.na(keep) & keep
    }
  }
  # One indicator column per predicate of the case's measures.
  own <- list(.x = x)
  for (i in seq_len(nrow(rows))) {
    for (p in c("a", "b")) {
      if (nzchar(rows[[p]][i])) own[[paste0(".", p, i)]] <- ind(rows[[p]][i], x)
    }
  }
  designed <- nzchar(first$strata)
  replicated <- nzchar(first$reps)
  if (replicated) {
    full <- rep_design(first, d)
    full$variables <- cbind(full$variables, as.data.frame(own))
    sub <- subset(full, domain)
    df_full <- degf(full)
  } else if (designed) {
    full <- full_design(first, d)
    full$variables <- cbind(full$variables, as.data.frame(own))
    sub <- subset(full, domain)
    df_full <- degf(full)
  } else {
    sub <- svydesign(ids = ~1, weights = as.formula(paste0("~", first$weight)),
                     data = cbind(d, as.data.frame(own))[domain, ])
    df_full <- NA
  }
  wd <- w[domain]
  df_sub <- degf(sub)
  # Every share of the case in one svymean call (value, SE, design effect).
  shares <- which(rows$kind == "share")
  if (length(shares)) {
    all <- svymean(as.formula(paste0("~", paste0(".a", shares, collapse = " + "))), sub, deff = "replace")
  }
  out <- character(0)
  for (i in seq_len(nrow(rows))) {
    m <- rows[i, ]
    fa <- as.formula(paste0("~.a", i))
    value <- se <- df <- deff <- NA
    flat <- FALSE
    ci_l <- ci_b <- ci_w <- c(NA, NA)
    res <- tryCatch({
      if (m$kind == "share") {
        k <- match(i, shares)
        value <- coef(all)[[k]]; se <- SE(all)[[k]]; deff <- deff(all)[[k]]; df <- df_sub
        if (value > 0 && value < 1 && m$intervals == "1") {
          flat <- degenerate(fa, sub)
          ci_l <- ci_of(svyciprop(fa, sub, method = "logit"))
          ci_b <- ci_of(svyciprop(fa, sub, method = "beta"))
          ci_w <- wilson(value, kish(wd), df)
        }
      } else if (m$kind == "mean") {
        est <- svymean(~.x, sub, deff = "replace")
        value <- coef(est)[[1]]; se <- SE(est)[[1]]; deff <- deff(est)[[1]]; df <- df_sub
        ci_l <- as.numeric(confint(est, df = df))
      } else if (m$kind == "ratio") {
        est <- svyratio(fa, as.formula(paste0("~.b", i)), sub)
        value <- coef(est)[[1]]; se <- SE(est)[[1]]
        den <- own[[paste0(".b", i)]] == 1
        # The interval is about the denominator's rows, a domain of the base's design (so its SE
        # is svyratio's): subset(subset(design, base), b).
        dsub <- sub[sub$variables[[paste0(".b", i)]] == 1, ]
        df <- degf(dsub)
        if (value > 0 && value < 1 && m$intervals == "1") {
          flat <- degenerate(fa, dsub)
          ci_l <- ci_of(svyciprop(fa, dsub, method = "logit"))
          ci_b <- ci_of(svyciprop(fa, dsub, method = "beta"))
          ci_w <- wilson(value, kish(w[domain & den]), df)
        }
      } else if (m$kind == "difference") {
        s <- as.numeric(m$scale)
        both <- svymean(as.formula(paste0("~.a", i, " + .b", i)), sub)
        est <- svycontrast(both, c(s, -s))
        value <- coef(est)[[1]]; se <- SE(est)[[1]]; df <- df_sub
        ci_l <- value + c(-1, 1) * qt(0.975, df) * se
      }
      TRUE
    }, error = function(e) { message("case ", first$case, " measure ", m$measure, ": ", conditionMessage(e)); FALSE })
    out <- c(out, paste(first$case, m$measure, sum(domain), num(sum(wd)), num(kish(wd)), num(value), num(se),
                        num(df), num(df_full), num(ci_l[1]), num(ci_l[2]), num(ci_b[1]), num(ci_b[2]),
                        num(ci_w[1]), num(ci_w[2]), num(deff), as.integer(flat), sep = "\t"))
  }
  out
}

# Tables read and designs built before the cases are split over the machine's cores (forked
# workers share them; one process where fork is missing).
for (i in seq_len(nrow(cases))) {
  d <- load_data(cases$data[i])
  if (nzchar(cases$reps[i])) rep_design(cases[i, ], d) else if (nzchar(cases$strata[i])) full_design(cases[i, ], d)
}
by_case <- split(cases, factor(cases$case, levels = unique(cases$case)))
cores <- if (.Platform$OS.type == "unix") max(1L, min(2L, parallel::detectCores())) else 1L
out <- unlist(parallel::mclapply(by_case, run_case, mc.cores = cores, mc.preschedule = TRUE))
writeLines(c(paste(header, collapse = "\t"), out), args[2])
