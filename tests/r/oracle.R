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
# Wilson has no survey method: it is computed here from its formula on the domain's Kish base.
suppressPackageStartupMessages(library(survey))
options(survey.lonely.psu = "certainty", digits = 17)

args <- commandArgs(trailingOnly = TRUE)
cases <- read.delim(args[1], colClasses = "character", na.strings = character(0), quote = "")

sql2r <- function(s) {
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

num <- function(v) if (is.null(v) || length(v) == 0 || !is.finite(v)) "NA" else sprintf("%.17g", v)
out <- character(0)
header <- c("case", "measure", "n", "weighted", "effective", "value", "se", "df", "df_full",
            "logit_lo", "logit_hi", "beta_lo", "beta_hi", "wilson_lo", "wilson_hi", "deff")

kish <- function(w) sum(w)^2 / sum(w^2)
wilson <- function(p, neff, df) {
  q <- qt(0.975, df); z2 <- q * q
  denom <- 1 + z2 / neff
  centre <- (p + z2 / (2 * neff)) / denom
  half <- q / denom * sqrt(p * (1 - p) / neff + z2 / (4 * neff * neff))
  c(max(0, centre - half), min(1, centre + half))
}
ci_of <- function(r) as.numeric(attr(r, "ci"))

for (case in unique(cases$case)) {
  rows <- cases[cases$case == case, , drop = FALSE]
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
  for (i in seq_len(nrow(rows))) {
    for (p in c("a", "b")) {
      if (nzchar(rows[[p]][i])) d[[paste0(".", p, i)]] <- ind(rows[[p]][i], x)
    }
  }
  d$.x <- x
  designed <- nzchar(first$strata)
  if (designed) {
    full <- svydesign(ids = as.formula(paste0("~", first$psu)), strata = as.formula(paste0("~", first$strata)),
                      weights = as.formula(paste0("~", first$weight)), nest = TRUE, data = d)
    sub <- subset(full, domain)
    df_full <- degf(full)
  } else {
    sub <- svydesign(ids = ~1, weights = as.formula(paste0("~", first$weight)), data = d[domain, ])
    df_full <- NA
  }
  wd <- w[domain]
  for (i in seq_len(nrow(rows))) {
    m <- rows[i, ]
    fa <- as.formula(paste0("~.a", i))
    fb <- as.formula(paste0("~.b", i))
    value <- se <- df <- deff <- NA
    ci_l <- ci_b <- ci_w <- c(NA, NA)
    res <- tryCatch({
      if (m$kind == "share") {
        est <- svymean(fa, sub, deff = "replace")
        value <- coef(est)[[1]]; se <- SE(est)[[1]]; deff <- deff(est)[[1]]; df <- degf(sub)
        if (value > 0 && value < 1) {
          ci_l <- ci_of(svyciprop(fa, sub, method = "logit"))
          ci_b <- ci_of(svyciprop(fa, sub, method = "beta"))
          ci_w <- wilson(value, kish(wd), df)
        }
      } else if (m$kind == "mean") {
        est <- svymean(~.x, sub, deff = "replace")
        value <- coef(est)[[1]]; se <- SE(est)[[1]]; deff <- deff(est)[[1]]; df <- degf(sub)
        ci_l <- as.numeric(confint(est, df = df))
      } else if (m$kind == "ratio") {
        est <- svyratio(fa, fb, sub)
        value <- coef(est)[[1]]; se <- SE(est)[[1]]
        den <- d[[paste0(".b", i)]] == 1
        # The interval is about the denominator's rows, a domain of the base's design (so its SE
        # is svyratio's): subset(subset(design, base), b).
        dsub <- sub[sub$variables[[paste0(".b", i)]] == 1, ]
        df <- degf(dsub)
        if (value > 0 && value < 1) {
          ci_l <- ci_of(svyciprop(fa, dsub, method = "logit"))
          ci_b <- ci_of(svyciprop(fa, dsub, method = "beta"))
          ci_w <- wilson(value, kish(w[domain & den]), df)
        }
      } else if (m$kind == "difference") {
        s <- as.numeric(m$scale)
        both <- svymean(as.formula(paste0("~.a", i, " + .b", i)), sub)
        est <- svycontrast(both, c(s, -s))
        value <- coef(est)[[1]]; se <- SE(est)[[1]]; df <- degf(sub)
        ci_l <- value + c(-1, 1) * qt(0.975, df) * se
      }
      TRUE
    }, error = function(e) { message("case ", case, " measure ", m$measure, ": ", conditionMessage(e)); FALSE })
    out <- c(out, paste(case, m$measure, sum(domain), num(sum(wd)), num(kish(wd)), num(value), num(se),
                        num(df), num(df_full), num(ci_l[1]), num(ci_l[2]), num(ci_b[1]), num(ci_b[2]),
                        num(ci_w[1]), num(ci_w[2]), num(deff), sep = "\t"))
  }
}
writeLines(c(paste(header, collapse = "\t"), out), args[2])
