"""Assemble a synthetic world: people, organisations, places, events, and their facts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chronoprobe.kg.synth import names
from chronoprobe.kg.synth.world import (
    DRIFT_SHARES,
    LAMATK_SHARES,
    Dates,
    EntityTable,
    FactChunk,
    avoid_repeats,
    other_than,
    pick_active,
    sequences,
    truncate_to_budget,
    zipf_weights,
)
from chronoprobe.time import day_number

# How often structure that makes statements multi-answer occurs (tuned so that about 15% of
# masked-object statements have several answers, as LAMA-TK reports).
NATIONAL_TEAM_RATE = 0.35  # an athlete's spell doubled by a national-team call-up
MINISTER_MP_RATE = 0.22  # a minister who also sits in parliament for the same years
SECOND_EMPLOYER_RATE = 0.2  # an employee with a concurrent second employer


@dataclass
class People:
    """A pool of people with the years they can take part in a relation."""

    index: np.ndarray  # entity indices
    birth: np.ndarray
    active_from: np.ndarray
    active_to: np.ndarray
    weights: np.ndarray

    def subset(self, mask: np.ndarray) -> People:
        weights = self.weights[mask]
        return People(
            self.index[mask],
            self.birth[mask],
            self.active_from[mask],
            self.active_to[mask],
            weights / weights.sum(),
        )

    def pick(self, rng, years) -> np.ndarray:
        """Entity index of an active, popularity-weighted person per year (-1: none)."""
        local = pick_active(rng, np.asarray(years), self.active_from, self.active_to, self.weights)
        return np.where(local >= 0, self.index[np.maximum(local, 0)], -1)


class WorldBuilder:
    def __init__(self, seed: int, facts: int, first: int, last: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.first, self.last = first, last
        shares = {**LAMATK_SHARES, **DRIFT_SHARES}
        scale = facts / sum(shares.values())
        self.budget = {r: max(3, round(s * scale)) for r, s in shares.items()}
        self.entities = EntityTable()
        self.chunks: list[FactChunk] = []
        self._taken: set[str] = set()  # person labels in use: names are unique world-wide

    # ----- entities --------------------------------------------------------------------------

    def people(self, n: int, kind: str, birth, active_from, active_to, exponent=0.6) -> People:
        labels = names.person_names(self.rng, n) if n else []
        labels = [self._unique(label) for label in labels]
        deaths = np.where(self.rng.random(n) < 0.3, birth + self.rng.integers(60, 95, n), 0)
        deaths = np.where(deaths > self.last, 0, deaths)
        index = self.entities.add(
            labels,
            "person",
            start_years=birth,
            end_years=deaths,
            aliases=[names.person_aliases(label) for label in labels],
            descriptions=[kind] * n,
        )
        return People(index, birth, active_from, active_to, zipf_weights(n, exponent, self.rng))

    def _unique(self, label: str) -> str:
        """The label, or with a middle initial when another pool already has it."""
        taken, candidate, letter = self._taken, label, 0
        while candidate in taken:
            first, rest = label.split(" ", 1)
            candidate = f"{first} {'ABCDEFGHJKLMNPRSTVW'[letter % 19]}. {rest}"
            letter += 1
        taken.add(candidate)
        return candidate

    def add(self, relation, subject, obj, start: Dates, end: Dates) -> None:
        inside = (start.year >= self.first) & (start.year <= self.last)
        keep = (subject >= 0) & (obj >= 0) & inside
        self.chunks.append(
            FactChunk(
                relation,
                subject[keep],
                obj[keep],
                start.take(keep).open_after(self.last),
                end.take(keep).open_after(self.last),
            )
        )

    def years_between(self, low, high, n) -> np.ndarray:
        return self.rng.integers(low, high + 1, n)

    # ----- building blocks -------------------------------------------------------------------

    def chains(self, n_chains: int, founded, mean_term: float, day_precise: bool):
        """Terms of offices held by one person at a time: (chain, position, start, end)."""
        rng = self.rng
        horizon = np.maximum(self.last - founded, 1)
        counts = np.ceil(horizon / mean_term * 1.5).astype(np.int64) + 1
        if not day_precise:
            chain, position, start, end = sequences(rng, counts, founded, mean_term, 0.0)
            keep = start <= self.last
            return chain[keep], position[keep], Dates.years(start[keep]), Dates.years(end[keep])
        chain = np.repeat(np.arange(n_chains), counts)
        first_day = day_number(
            founded, rng.integers(1, 13, n_chains), rng.integers(1, 29, n_chains)
        )
        length = (rng.geometric(1.0 / mean_term, len(chain)) * 365.25).astype(np.int64)
        length += rng.integers(-120, 120, len(chain))
        length = np.maximum(length, 30)
        before = np.cumsum(length) - length
        starts_at = np.concatenate([[0], np.cumsum(counts)[:-1]])
        start_days = first_day[chain] + before - before[starts_at[chain]]
        position = np.arange(len(chain)) - starts_at[chain]
        start, end = Dates.days(start_days), Dates.days(start_days + length)
        keep = start.year <= self.last
        return chain[keep], position[keep], start.take(keep), end.take(keep)

    def holders(self, pool: People, position, start_years, return_rate=0.1) -> np.ndarray:
        """One holder per term, active when it starts; some return for a later term."""
        holder = pool.pick(self.rng, start_years)
        back = np.flatnonzero((position >= 2) & (self.rng.random(len(holder)) < return_rate))
        holder[back] = holder[back - 2]
        return holder

    def national_holders(self, pools: list[People], nation, position, start_years, rate=0.1):
        """Holders of offices of several countries, each drawn from its own country's pool."""
        holder = np.full(len(nation), -1)
        for country in np.unique(nation):
            rows = np.flatnonzero(nation == country)
            holder[rows] = self.holders(pools[country], position[rows], start_years[rows], rate)
        return holder

    def careers(self, pool_size: int, mean_spells: float, mean_length: float, budget: int):
        """Spell sequences for candidate people, truncated to ``budget`` spells in all."""
        rng = self.rng
        starts = self.years_between(self.first, self.last - 1, pool_size)
        weight = rng.lognormal(0.0, 0.8, pool_size)
        counts = 1 + rng.poisson((mean_spells - 1) * weight / weight.mean())
        person, position, start, end = sequences(rng, counts, starts, mean_length, 0.15)
        inside = start <= self.last
        used = truncate_to_budget(np.bincount(person[inside], minlength=pool_size), budget)
        keep = inside & (person < used)
        return used, starts[:used], person[keep], position[keep], start[keep], end[keep]

    # ----- relations -------------------------------------------------------------------------

    def countries(self) -> np.ndarray:
        n = int(np.clip(round(self.budget["P6"] / 16), 2, 400))
        self.country_labels = names.country_names(self.rng, n)
        founded = np.where(self.rng.random(n) < 0.3, self.rng.integers(1800, self.first, n), 0)
        return self.entities.add(self.country_labels, "country", start_years=founded)

    def sports(self, countries: np.ndarray) -> People:
        rng, budget = self.rng, self.budget["P54"]
        club_budget = int(budget / (1 + NATIONAL_TEAM_RATE / 4.0))
        used, starts, person, position, start, end = self.careers(
            club_budget // 3 + 10, mean_spells=4.0, mean_length=3.0, budget=club_budget
        )
        career_end = np.zeros(used, dtype=np.int64)
        np.maximum.at(career_end, person, end)
        births = starts - rng.integers(17, 22, used)
        athletes = self.people(used, "athlete", births, starts, career_end)
        n_clubs = max(8, used // 15)
        places = names.place_names(rng, n_clubs)
        suffix = rng.choice(names.CLUB_SUFFIXES, n_clubs)
        labels = [
            f"FC {p}" if s == "FC" else f"{p} {s}" for p, s in zip(places, suffix, strict=True)
        ]
        clubs = self.entities.add(
            labels,
            "team",
            start_years=rng.integers(1860, self.first, n_clubs),
            aliases=[(p,) for p in places],
        )
        club = rng.choice(n_clubs, size=len(person), p=zipf_weights(n_clubs, 0.8, rng))
        club = avoid_repeats(rng, club, position, n_clubs, return_rate=0.08)
        starts_d, ends_d = self._transfer_windows(person, position, start, end)
        self.add("P54", athletes.index[person], clubs[club], starts_d, ends_d)
        # National teams: a call-up for exactly the years of one club spell.
        national = self.entities.add(
            [f"{c} national football team" for c in self.country_labels], "team"
        )
        nation = rng.integers(0, len(countries), used)
        called = np.flatnonzero(rng.random(len(person)) < NATIONAL_TEAM_RATE / 4.0)
        self.add(
            "P54",
            athletes.index[person[called]],
            national[nation[person[called]]],
            starts_d.take(called),
            ends_d.take(called),
        )
        self.clubs = clubs
        return athletes

    def _transfer_windows(self, person, position, start, end) -> tuple[Dates, Dates]:
        """A quarter of careers are known to the month: moves in the summer or winter window."""
        rng = self.rng
        monthly = (rng.random(person.max() + 1 if len(person) else 0) < 0.25)[person]
        window = np.where(rng.random(len(person)) < 0.7, 7, 1)
        follows = np.roll(position, -1) == position + 1
        left = np.where(follows & (np.roll(start, -1) == end), np.roll(window, -1), 6)
        starts, ends = Dates.years(start), Dates.years(end)
        for dates, months in ((starts, window), (ends, left)):
            dates.month = np.where(monthly, months, 0)
            dates.precision = np.where(monthly, 10, 9)
        return starts, ends

    def politics(self, countries: np.ndarray) -> People:
        rng, first, last = self.rng, self.first, self.last
        n_c = len(countries)
        n_pol = max(8 * n_c, self.budget["P39"] // 3)
        birth = rng.integers(first - 60, last - 29, n_pol)
        pool = self.people(n_pol, "politician", birth, birth + 28, birth + 78)
        nation = rng.permutation(np.arange(n_pol) % n_c)  # every country has politicians
        pools = [pool.subset(nation == c) for c in range(n_c)]
        # Heads of government: one at a time, handovers on exact days. Small worlds keep only
        # the recent part of each chain, so the budget holds.
        since = max(first, last - int(np.ceil(4.0 * self.budget["P6"] / n_c)))
        chain, position, start, end = self.chains(n_c, np.full(n_c, since), 4.0, day_precise=True)
        holder = self.national_holders(pools, chain, position, start.year)
        premiers = self.entities.add(
            [f"Prime Minister of {c}" for c in self.country_labels],
            "office",
            start_years=np.full(n_c, first),
        )
        self.add("P6", countries[chain], holder, start, end)
        self.add("P39", holder, premiers[chain], start, end)
        parliaments = self.entities.add(
            [f"Member of the Parliament of {c}" for c in self.country_labels], "office"
        )
        remaining = max(self.budget["P39"] - len(chain), 10)
        chain_budget = int(remaining / (1 + MINISTER_MP_RATE) * 0.6)
        added = self._ministries(pools, parliaments, chain_budget)
        self._parliament_terms(pools, parliaments, remaining - added)
        self.politicians, self.politician_nation = pool, nation
        return pool

    def _ministries(self, pools: list[People], parliaments, budget: int) -> int:
        """Ministers and mayors: chains of single holders, some with exact days; a share of
        the ministers also sit in parliament for the same years. Returns the facts added."""
        rng = self.rng
        n = max(4, budget // 5)
        labels, nation = self._office_labels(n, len(pools))
        founded = rng.integers(self.first, self.last - 15, n)
        precise = rng.random(n) < 0.2
        terms = []
        for flag in (False, True):
            chosen = np.flatnonzero(precise == flag)
            if len(chosen):
                c, p, s, e = self.chains(len(chosen), founded[chosen], 4.0, day_precise=flag)
                terms.append((chosen[c], p, s, e))
        counts = np.zeros(n, dtype=np.int64)
        for office, *_ in terms:
            np.add.at(counts, office, 1)
        used = truncate_to_budget(counts, budget)
        offices = self.entities.add(labels[:used], "office", start_years=founded[:used])
        added = 0
        for office, position, start, end in terms:
            keep = np.flatnonzero(office < used)
            office, position, start, end = (
                office[keep],
                position[keep],
                start.take(keep),
                end.take(keep),
            )
            holder = self.national_holders(pools, nation[office], position, start.year)
            self.add("P39", holder, offices[office], start, end)
            both = np.flatnonzero(rng.random(len(holder)) < MINISTER_MP_RATE)
            self.add(
                "P39",
                holder[both],
                parliaments[nation[office[both]]],
                start.take(both),
                end.take(both),
            )
            added += len(holder) + len(both)
        return added

    def _office_labels(self, n: int, n_countries: int) -> tuple[list[str], np.ndarray]:
        portfolios = [
            (f"Minister of {p} of {self.country_labels[c]}", c)
            for c in range(n_countries)
            for p in names.PORTFOLIOS
        ]
        self.rng.shuffle(portfolios)
        chosen = portfolios[:n]
        if n > len(chosen):  # then ambassadors (one per pair of countries), then mayors
            pairs = self.rng.permutation(n_countries * n_countries)[: n - len(chosen)]
            chosen += [
                (f"Ambassador of {self.country_labels[a]} to {self.country_labels[b]}", int(a))
                for a, b in zip(pairs // n_countries, pairs % n_countries, strict=True)
                if a != b
            ]
        if n > len(chosen):
            places = names.place_names(self.rng, n - len(chosen))
            nations = self.rng.integers(0, n_countries, len(places))
            chosen += [(f"Mayor of {p}", int(c)) for p, c in zip(places, nations, strict=True)]
        return [label for label, _ in chosen], np.array([c for _, c in chosen])

    def _parliament_terms(self, pools: list[People], parliaments: np.ndarray, budget: int) -> None:
        """Legislatures of four years: many members of the country's own pool, identical terms."""
        terms = np.arange(self.first, self.last + 1, 4)
        slots = max(1, budget // (len(parliaments) * len(terms)))
        for country, house in enumerate(parliaments):
            begin = np.repeat(terms, slots)
            member = pools[country].pick(self.rng, begin)
            rows = np.unique(np.stack([begin, member], 1), axis=0)
            rows = rows[rows[:, 1] >= 0]
            self.add(
                "P39",
                rows[:, 1],
                np.full(len(rows), house),
                Dates.years(rows[:, 0]),
                Dates.years(rows[:, 0] + 4),
            )

    def business(self) -> People:
        rng = self.rng
        budget = self.budget["P108"]
        own = int(budget / (1 + SECOND_EMPLOYER_RATE / 3))
        used, starts, person, position, start, end = self.careers(
            own // 2 + 10, mean_spells=3.0, mean_length=4.0, budget=own
        )
        births = starts - rng.integers(21, 27, used)
        staff = self.people(used, "business person", births, births + 25, births + 70)
        n_companies = max(8, used // 8)
        places = names.place_names(rng, n_companies)
        suffix = rng.choice(names.COMPANY_SUFFIXES, n_companies)
        companies = self.entities.add(
            [f"{p} {s}" for p, s in zip(places, suffix, strict=True)],
            "company",
            start_years=rng.integers(1850, self.last - 5, n_companies),
        )
        employer = rng.choice(n_companies, size=len(person), p=zipf_weights(n_companies, 0.9, rng))
        employer = avoid_repeats(rng, employer, position, n_companies, return_rate=0.05)
        self.add(
            "P108", staff.index[person], companies[employer], Dates.years(start), Dates.years(end)
        )
        second = np.flatnonzero(rng.random(len(person)) < SECOND_EMPLOYER_RATE / 3)
        self.add(
            "P108",
            staff.index[person[second]],
            companies[other_than(rng, employer[second], n_companies)],
            Dates.years(start[second]),
            Dates.years(end[second]),
        )
        self._chairs(staff, companies)
        return staff

    def _chairs(self, staff: People, companies: np.ndarray) -> None:
        n = max(1, min(len(companies), self.budget["P488"] // 8))
        founded = np.full(n, self.first)
        chain, position, start, end = self.chains(n, founded, 5.0, day_precise=False)
        holder = self.holders(staff, position, start.year, return_rate=0.05)
        self.add("P488", companies[chain], holder, start, end)

    def coaches(self, athletes: People) -> None:
        coaches = People(
            athletes.index,
            athletes.birth,
            athletes.active_to,
            athletes.active_to + 30,
            athletes.weights,
        )
        n = max(1, min(len(self.clubs), self.budget["P286"] // 12))
        chain, position, start, end = self.chains(n, np.full(n, self.first), 3.0, day_precise=False)
        holder = self.holders(coaches, position, start.year, return_rate=0.05)
        self.add("P286", self.clubs[chain], holder, start, end)

    def awards(self, athletes: People, politicians: People, staff: People) -> None:
        rng, first, last = self.rng, self.first, self.last
        adults = self._merge(politicians, staff)
        places = names.place_names(rng, 400)
        kinds = (  # candidate names, winners per year (low, high), pool, share of the budget
            (
                [f"{c} {a}" for c in self.country_labels for a in names.SPORT_AWARDS],
                (1, 1),
                athletes,
                0.35,
            ),
            ([f"{p} Prize in {f}" for p in places for f in names.FIELDS], (1, 3), adults, 0.35),
            ([f"Order of {p}" for p in places], (2, 6), adults, 0.30),
        )
        for candidates, (low, high), pool, share in kinds:
            budget = max(1, int(self.budget["P166"] * share * 0.88))  # dedupe loses a few
            n = max(1, round(budget / ((last - first) / 2 * (low + high) / 2)))
            labels = [candidates[i] for i in rng.permutation(len(candidates))[:n]]
            since = rng.integers(first, last - 3, len(labels))
            if len(labels) == 1:  # a single award with a small budget: only the last years
                since = np.maximum(since, last - budget * 2 // (low + high))
            awards = self.entities.add(labels, "award", start_years=since)
            years = [np.arange(y, last + 1) for y in since]
            award = np.repeat(np.arange(len(labels)), [len(y) for y in years])
            year = np.concatenate(years)
            winners = rng.integers(low, high + 1, len(year))
            slot = np.repeat(np.arange(len(year)), winners)
            person = pool.pick(rng, year[slot])
            rows = np.unique(np.stack([award[slot], year[slot], person], 1), axis=0)
            rows = rows[rows[:, 2] >= 0]
            dated = rng.random(len(labels)) < 0.25
            ceremony = day_number(
                rows[:, 1],
                1 + (rows[:, 0] * 7 + rows[:, 1]) % 12,
                1 + (rows[:, 0] + rows[:, 1]) % 28,
            )
            on_day = dated[rows[:, 0]]
            when = Dates.years(rows[:, 1])
            exact = Dates.days(ceremony)
            for name in ("month", "day"):
                setattr(when, name, np.where(on_day, getattr(exact, name), 0))
            when.precision = np.where(on_day, 11, 9)
            self.add("P166", rows[:, 2], awards[rows[:, 0]], when, when.take(slice(None)))

    def _merge(self, *pools: People) -> People:
        weights = np.concatenate([p.weights for p in pools])
        return People(
            np.concatenate([p.index for p in pools]),
            np.concatenate([p.birth for p in pools]),
            np.concatenate([p.birth for p in pools]) + 35,
            np.concatenate([p.birth for p in pools]) + 85,
            weights / weights.sum(),
        )

    def education(self, everyone: People) -> None:
        rng = self.rng
        n = max(1, int(self.budget["P69"] / 1.35))
        n_unis = max(5, self.budget["P69"] // 30)
        places = names.place_names(rng, n_unis)
        universities = self.entities.add(
            [
                f"University of {p}" if i % 3 else f"{p} Institute of Technology"
                for i, p in enumerate(places)
            ],
            "university",
            start_years=rng.integers(1200, self.first, n_unis),
        )
        eligible = np.flatnonzero(everyone.birth + 18 >= self.first)
        who = rng.choice(eligible, size=min(n, len(eligible)), replace=False)
        uni_w = zipf_weights(n_unis, 0.8, rng)
        begin = everyone.birth[who] + 18
        finish = begin + rng.integers(3, 5, len(who))
        first_uni = rng.choice(n_unis, len(who), p=uni_w)
        self.add(
            "P69",
            everyone.index[who],
            universities[first_uni],
            Dates.years(begin),
            Dates.years(finish),
        )
        master = np.flatnonzero(rng.random(len(who)) < 0.35)
        self.add(
            "P69",
            everyone.index[who[master]],
            universities[other_than(rng, first_uni[master], n_unis)],
            Dates.years(finish[master]),
            Dates.years(finish[master] + 2),
        )

    def marriages(self, everyone: People) -> None:
        rng = self.rng
        n = max(1, round(self.budget["P26"] / 2 / 0.8))  # about a fifth start after the world
        order = np.argsort(everyone.birth, kind="stable")
        a = rng.integers(0, len(order), n)
        b = np.clip(a + rng.integers(1, 40, n) * rng.choice([-1, 1], n), 0, len(order) - 1)
        keep = a != b
        pa_, pb = order[a[keep]], order[b[keep]]
        start = (
            np.maximum(everyone.birth[pa_], everyone.birth[pb]) + 22 + rng.geometric(0.15, len(pa_))
        )
        divorced = rng.random(len(pa_)) < 0.35
        end = np.where(divorced, start + rng.integers(2, 20, len(pa_)), self.last + 1)
        x, y = everyone.index[pa_], everyone.index[pb]
        for s, o in ((x, y), (y, x)):  # spouse is symmetric: both directions
            self.add("P26", s, o, Dates.years(start), Dates.years(end))

    def citizenship(self, everyone: People, countries: np.ndarray) -> None:
        rng = self.rng
        n = min(self.budget["P27"], len(everyone.index))
        who = rng.choice(len(everyone.index), size=n, replace=False)
        start = everyone.birth[who] + rng.integers(18, 50, n)
        renounced = rng.random(n) < 0.2
        end = np.where(renounced, start + rng.integers(2, 30, n), self.last + 1)
        self.add(
            "P27",
            everyone.index[who],
            countries[rng.integers(0, len(countries), n)],
            Dates.years(start),
            Dates.years(end),
        )

    def parties(self, countries: np.ndarray) -> None:
        rng, pool = self.rng, self.politicians
        per_country = 4
        adjectives = ("Liberal", "Social Democratic", "Conservative", "Green", "People's", "Labour")
        labels = [
            f"{adjectives[(c * 5 + k) % len(adjectives)]} Party of {self.country_labels[c]}"
            for c in range(len(countries))
            for k in range(per_country)
        ]
        labels = list(dict.fromkeys(labels))
        parties = self.entities.add(
            labels, "party", start_years=rng.integers(1850, self.first, len(labels))
        )
        n = max(1, int(self.budget["P102"] / 1.6))
        who = rng.choice(len(pool.index), size=min(n, len(pool.index)), replace=False)
        counts = 1 + rng.poisson(0.6, len(who))
        person, position, start, end = sequences(rng, counts, pool.active_from[who], 8.0, 0.1)
        nation = self.politician_nation[who[person]]
        choice = nation * per_country + rng.integers(0, per_country, len(person))
        choice = np.minimum(choice, len(parties) - 1)
        choice = avoid_repeats(rng, choice, position, len(parties), return_rate=0.1)
        self.add(
            "P102", pool.index[who[person]], parties[choice], Dates.years(start), Dates.years(end)
        )

    def events(self) -> None:
        rng, first, last = self.rng, self.first, self.last
        n_wars = max(2, len(self.country_labels) // 3)
        a = rng.choice(self.country_labels, n_wars)
        b = rng.choice(self.country_labels, n_wars)
        begin = rng.integers(first, last - 1, n_wars)
        labels = list(dict.fromkeys(f"{x}-{y} War" for x, y in zip(a, b, strict=True) if x != y))
        self.entities.add(
            labels,
            "event",
            start_years=begin[: len(labels)],
            end_years=begin[: len(labels)] + rng.integers(1, 8, len(labels)),
        )
        games = np.arange(first + 2, last + 1, 4)
        self.entities.add(
            [f"{y} Summer Games" for y in games], "event", start_years=games, end_years=games
        )
        elections = [(y, c) for c in self.country_labels for y in range(first + 1, last + 1, 4)]
        years = np.array([y for y, _ in elections])
        self.entities.add(
            [f"{y} {c} general election" for y, c in elections],
            "event",
            start_years=years,
            end_years=years,
        )

    def build(self) -> tuple[EntityTable, list[FactChunk]]:
        countries = self.countries()
        athletes = self.sports(countries)
        politicians = self.politics(countries)
        staff = self.business()
        self.coaches(athletes)
        self.awards(athletes, politicians, staff)
        everyone = self._merge(athletes, politicians, staff)
        self.education(everyone)
        self.marriages(everyone)
        self.citizenship(everyone, countries)
        self.parties(countries)
        self.events()
        return self.entities, self.chunks
